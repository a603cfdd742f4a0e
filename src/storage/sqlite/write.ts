/**
 * The write path of a store: creates, compare-and-swap updates, deletes and
 * archive batches, each run inside the connection's group commit. A follower
 * sends each of these to its writer instead (`SqliteConnection.remote`).
 */
import { eventCluster, nowMicroTime, occurrenceChange } from '../../api/index.js';
import type { CoreEvent, OccurrenceStamp } from '../../api/index.js';
import type { ArchiveBatch, ArchiveBatchResult, ClusterBinding, ClusterIdentity } from '../archive-store.js';
import type { Preconditions, TryUpdate, UpdateOptions, UpdateResult, WriteOptions } from '../event-store.js';
import { StorageError } from '../errors.js';
import { checkPreconditions, decodeEvent, encodeEvent, eventKey, fieldValue, keyOfEvent, microsOf, planArchiveWrites, sameContent, withRevision } from '../shared/index.js';
import type { Change } from '../shared/index.js';
import { CHANGE_TYPES } from './connection.js';
import type { SqliteConnection } from './connection.js';
import { encodeObject } from '../shared/object-codec.js';
import { Op, labelsColumn, nameHash, spanSeconds } from './schema.js';
import type { CurrentRow } from './statements.js';
import { longText } from './texts.js';
import { internedValues } from './interned.js';

/** Fields are the derived columns of an event's version row (see `FIELD_COLUMNS`), the interned ones as their values. */
type Fields = Record<string, string | number | null> & { involved_kind: string; reason: string; type: string };

/** fieldsOf are the derived columns of an event's version row, computed before its write's transaction. */
function fieldsOf(e: CoreEvent): Fields {
  return {
    involved_kind: fieldValue(e, 'involvedObject.kind'),
    involved_hash: nameHash(fieldValue(e, 'involvedObject.name')),
    reason: fieldValue(e, 'reason'),
    type: fieldValue(e, 'type'),
    ...spanSeconds(e),
    cluster: eventCluster(e) || null,
    labels: labelsColumn(e.metadata.labels),
  };
}

/** storedFields are `fields` as the row stores them, the values interned: inside the write's transaction, which adds a new value with its row. */
function storedFields(c: SqliteConnection, fields: Fields): Record<string, string | number | null> {
  const interned = internedValues(c.db!);
  return { ...fields, involved_kind: interned.id(fields.involved_kind), reason: interned.id(fields.reason), type: interned.id(fields.type) };
}

/** SqliteWrites writes a store's events and their occurrences over its connection. */
export class SqliteWrites {
  private observed: { time: string; micros: number } | undefined;

  constructor(private readonly c: SqliteConnection) {}

  async create(event: CoreEvent, options: WriteOptions = {}): Promise<CoreEvent> {
    const writer = this.c.writer;
    if (writer !== undefined) {
      const createEncoded = writer.createEncoded?.bind(writer);
      if (createEncoded === undefined) return this.c.remote<CoreEvent>('create', [event, options]);
      // The event crosses as its stored JSON (the writer would write that), and only its revision comes back.
      return withRevision(event, await this.c.toWriter(() => createEncoded(encodeEvent(event), options)));
    }
    return withRevision(event, await this.insertNew(event, encodeEvent(event), options));
  }

  /** createEncoded writes a follower's create, sent as the event's stored JSON; it resolves with the event's revision. */
  createEncoded(json: string, options: WriteOptions = {}): Promise<number> {
    let event: CoreEvent;
    try {
      event = JSON.parse(json) as CoreEvent;
    } catch (e) {
      return Promise.reject(new StorageError('Internal', `a follower sent an event that is not JSON: ${(e as Error).message}`));
    }
    return this.insertNew(event, json, options);
  }

  /** insertNew writes `event` (stored as `json`) as a new key in the next group commit and resolves with its revision. */
  private insertNew(event: CoreEvent, json: string, options: WriteOptions): Promise<number> {
    const c = this.c;
    const key = keyOfEvent(event);
    const object = encodeObject(json);
    const fields = fieldsOf(event);
    const expiresAt = c.expiry(options.ttlSeconds);
    return c.enqueue((changes) => {
      if (c.stmt.current.get(key) !== undefined) {
        throw new StorageError('KeyExists', `${key} already exists`, { key, currentResourceVersion: c.rv });
      }
      const rv = ++c.rv;
      c.stmt.insert.run({ rv, key, op: Op.ADDED, object, prev_rv: null, expires_at: expiresAt, text_rv: null, ...storedFields(c, fields) });
      c.searchIndex?.add(rv, event, json.length);
      changes.push({ rv, type: 'ADDED', key, json });
      if (options.occurrence !== undefined) this.appendOccurrence(event, rv, occurrenceChange(undefined, event), options.occurrence);
      return rv;
    });
  }

  async guaranteedUpdate(namespace: string, name: string, tryUpdate: TryUpdate, options: UpdateOptions = {}): Promise<UpdateResult> {
    const c = this.c;
    const key = eventKey(namespace, name);
    for (;;) {
      const cur = await c.read(() => c.stmt.current.get(key));
      if (cur === undefined && options.allowCreate !== true) {
        throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: c.rv });
      }
      const curJson = cur === undefined ? undefined : c.texts.json(cur.object);
      const current = cur === undefined ? undefined : decodeEvent(curJson!, cur.rv);
      checkPreconditions(key, current, options.preconditions, c.rv);
      const next = await tryUpdate(current);
      if (keyOfEvent(next) !== key) throw new StorageError('InvalidObject', `the updated object is not ${key}`, { key });
      const json = encodeEvent(next);
      if (curJson !== undefined && sameContent(json, curJson)) {
        const still = await c.read(() => c.stmt.current.get(key));
        if (still?.rv === cur!.rv) return { object: decodeEvent(curJson, cur!.rv), created: false };
        continue;
      }
      const writeOptions: WriteOptions = {};
      if (options.ttlSeconds !== undefined) writeOptions.ttlSeconds = options.ttlSeconds;
      if (options.occurrence !== undefined) writeOptions.occurrence = options.occurrence;
      const rv =
        c.writer !== undefined
          ? await c.remote<number | undefined>('writeIfAt', [key, cur?.rv ?? null, next, current ?? null, writeOptions])
          : await this.casWrite(key, cur?.rv ?? null, json, next, current ?? null, writeOptions);
      if (rv === undefined || rv === null) continue;
      return { object: decodeEvent(json, rv), created: cur === undefined };
    }
  }

  /** writeIfAt is an update's compare-and-swap (see `SqliteEventStore.writeIfAt`). */
  writeIfAt(key: string, expectRv: number | null, next: CoreEvent, previous: CoreEvent | null, options: WriteOptions = {}): Promise<number | undefined> {
    if (this.c.writer !== undefined) return this.c.remote('writeIfAt', [key, expectRv, next, previous, options]);
    if (keyOfEvent(next) !== key) return Promise.reject(new StorageError('InvalidObject', `the updated object is not ${key}`, { key }));
    return this.casWrite(key, expectRv, encodeEvent(next), next, previous, options);
  }

  private casWrite(key: string, expectRv: number | null, json: string, next: CoreEvent, previous: CoreEvent | null, options: WriteOptions): Promise<number | undefined> {
    const c = this.c;
    // A long message may repeat the current version's, and be stored once (`texts.ts`): the write, which reads that version, encodes it.
    const text = longText(next.message);
    const encoded = text === undefined ? encodeObject(json) : undefined;
    const fields = fieldsOf(next);
    const expiresAt = c.expiry(options.ttlSeconds);
    return c.enqueue((changes) => {
      const now = c.stmt.current.get(key);
      // Compare-and-swap on the revision read before tryUpdate, as etcd does; a lost race retries.
      if ((now?.rv ?? null) !== expectRv) return undefined;
      const prevJson = now === undefined ? undefined : c.texts.json(now.object);
      const { object, text_rv } = c.texts.version(json, text, now === undefined ? undefined : { rv: now.rv, text_rv: now.text_rv, json: prevJson! }, encoded);
      const rv = ++c.rv;
      if (now !== undefined) c.stmt.supersede.run(rv, now.rv);
      const op = now === undefined ? Op.ADDED : Op.MODIFIED;
      c.stmt.insert.run({ rv, key, op, object, prev_rv: now?.rv ?? null, expires_at: expiresAt, text_rv, ...storedFields(c, fields) });
      const change: Change = { rv, type: CHANGE_TYPES[op], key, json };
      if (now !== undefined) {
        change.prevJson = prevJson!;
        change.prevRv = now.rv;
      }
      c.searchIndex?.add(rv, next, json.length, now === undefined ? undefined : { rv: now.rv, json: change.prevJson! });
      changes.push(change);
      if (options.occurrence !== undefined) this.appendOccurrence(next, rv, occurrenceChange(previous ?? undefined, next), options.occurrence);
      return rv;
    });
  }

  async delete(namespace: string, name: string, options: { preconditions?: Preconditions } = {}): Promise<CoreEvent> {
    const c = this.c;
    if (c.writer !== undefined) return c.remote<CoreEvent>('delete', [namespace, name, options]);
    const key = eventKey(namespace, name);
    const { rv, json } = await c.enqueue((changes) => {
      const cur = c.stmt.current.get(key);
      if (cur === undefined) throw new StorageError('KeyNotFound', `${key} not found`, { key, currentResourceVersion: c.rv });
      const json = c.texts.json(cur.object);
      checkPreconditions(key, decodeEvent(json, cur.rv), options.preconditions, c.rv);
      return { rv: this.tombstone(key, cur, changes, json), json };
    });
    return decodeEvent(json, rv);
  }

  applyArchiveBatch(batch: ArchiveBatch): Promise<ArchiveBatchResult> {
    const c = this.c;
    if (c.writer !== undefined) return c.remote('applyArchiveBatch', [batch]);
    return c.enqueue((changes) => {
      // Decide everything before writing: a run may throw only before it writes (it shares its transaction with other writers).
      // Each key is read once: the plan and the writes share what was found.
      const found = new Map<string, { row: CurrentRow; json: string } | undefined>();
      const lookup = (key: string): { row: CurrentRow; json: string } | undefined => {
        if (found.has(key)) return found.get(key);
        const row = c.stmt.current.get(key);
        const entry = row === undefined ? undefined : { row, json: c.texts.json(row.object) };
        found.set(key, entry);
        return entry;
      };
      const { planned, skipped } = planArchiveWrites(batch.writes, (key) => {
        const entry = lookup(key);
        return entry === undefined ? undefined : decodeEvent(entry.json, entry.row.rv);
      });
      let events = 0;
      let occurrences = 0;
      for (const p of planned) {
        const json = encodeEvent(p.object);
        const now = lookup(p.key);
        if (now !== undefined && sameContent(json, now.json)) continue;
        const rv = ++c.rv;
        if (now !== undefined) c.stmt.supersede.run(rv, now.row.rv);
        const op = now === undefined ? Op.ADDED : Op.MODIFIED;
        const prev = now === undefined ? undefined : { rv: now.row.rv, text_rv: now.row.text_rv, json: now.json };
        const { object, text_rv } = c.texts.version(json, longText(p.object.message), prev);
        c.stmt.insert.run({ rv, key: p.key, op, object, prev_rv: now?.row.rv ?? null, expires_at: null, text_rv, ...storedFields(c, fieldsOf(p.object)) });
        c.searchIndex?.add(rv, p.object, json.length, now === undefined ? undefined : { rv: now.row.rv, json: now.json });
        found.set(p.key, { row: { rv, object, expires_at: null, text_rv }, json });
        const change: Change = { rv, type: CHANGE_TYPES[op], key: p.key, json };
        if (now !== undefined) {
          change.prevJson = now.json;
          change.prevRv = now.row.rv;
        }
        changes.push(change);
        events++;
        if (p.occurrence !== undefined) {
          this.appendOccurrence(p.object, rv, p.occurrence, batch.stamp);
          occurrences++;
        }
      }
      if (batch.checkpoint !== undefined) c.archive.setCheckpoint(batch.checkpoint, c.o.clock.now());
      return { events, occurrences, skipped: skipped + planned.length - events };
    });
  }

  bindCluster(identity: ClusterIdentity): Promise<ClusterBinding> {
    if (this.c.writer !== undefined) return this.c.remote('bindCluster', [identity]);
    return this.c.enqueue(() => this.c.archive.bindCluster(identity, this.c.o.clock.now()));
  }

  /** tombstone deletes `key` (at its current version `cur`) inside the running write and returns the delete's revision. */
  tombstone(key: string, cur: CurrentRow, changes: Change[], json = this.c.texts.json(cur.object)): number {
    const c = this.c;
    const rv = ++c.rv;
    c.stmt.supersede.run(rv, cur.rv);
    c.stmt.tombstone.run(rv, cur.rv);
    changes.push({ rv, type: 'DELETED', key, json, prevJson: json, prevRv: cur.rv });
    return rv;
  }

  private appendOccurrence(event: CoreEvent, rv: number, change: { countBefore: number; countAfter: number } | undefined, stamp: OccurrenceStamp): void {
    if (change === undefined) return;
    const time = stamp.observedTime ?? nowMicroTime(this.c.o.clock);
    // A batch shares one stamp: its time is parsed once.
    if (this.observed?.time !== time) this.observed = { time, micros: microsOf(time) };
    this.c.archive.append(event, rv, change, this.observed, stamp);
  }
}
