/** The EventStore conformance suite's writes: create and get, revisions, guaranteedUpdate, delete and TTL. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import type { CoreEvent } from '../../api/index.js';
import type { StorageError } from '../errors.js';
import { it, keys, rejectsWith, rvOf, sampleEvent, storeCases, take } from './conformance-support.js';
import type { ConformanceSetup } from './conformance-support.js';

/** conformanceCreate registers the cases of `create` and `get`: keys, resourceVersions, and objects that belong to the caller. */
export function conformanceCreate(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
  void describe('create and get', () => {
    it(
      'stores an object, stamps a resourceVersion and reads it back',
      withStore(async (store) => {
        const input = sampleEvent('default', 'a');
        input.metadata.resourceVersion = '999';
        const created = await store.create(input);
        assert.ok(rvOf(created) > 0);
        assert.notEqual(created.metadata.resourceVersion, '999');
        const got = await store.get('default', 'a');
        assert.deepEqual(got, created);
        assert.equal(got.message, 'event a');
        assert.equal(await store.currentResourceVersion(), rvOf(created));
      }),
    );
    it(
      'refuses a taken key with KeyExists and keeps the first object',
      withStore(async (store) => {
        await store.create(sampleEvent('default', 'a'));
        await rejectsWith(store.create(sampleEvent('default', 'a', { message: 'second' })), 'KeyExists');
        assert.equal((await store.get('default', 'a')).message, 'event a');
      }),
    );
    it(
      'answers KeyNotFound for a missing key, also in another namespace',
      withStore(async (store) => {
        await store.create(sampleEvent('default', 'a'));
        await rejectsWith(store.get('default', 'b'), 'KeyNotFound');
        await rejectsWith(store.get('other', 'a'), 'KeyNotFound');
      }),
    );
    it(
      'refuses an object without namespace or name with InvalidObject',
      withStore(async (store) => {
        await rejectsWith(store.create(sampleEvent('', 'a')), 'InvalidObject');
        await rejectsWith(store.create(sampleEvent('default', '')), 'InvalidObject');
      }),
    );
    it(
      'does not keep a reference to the caller object',
      withStore(async (store) => {
        const input = sampleEvent('default', 'a');
        const created = await store.create(input);
        input.message = 'changed by caller';
        created.message = 'changed by caller';
        assert.equal((await store.get('default', 'a')).message, 'event a');
      }),
    );
  });
}

/** conformanceResourceVersions registers the cases of the store-wide revision that every kind of write takes. */
export function conformanceResourceVersions(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
  void describe('resourceVersions', () => {
    it(
      'are store-wide and strictly increasing across every kind of write',
      withStore(async (store) => {
        const seen: number[] = [];
        seen.push(rvOf(await store.create(sampleEvent('a', 'x'))));
        seen.push(rvOf(await store.create(sampleEvent('b', 'y'))));
        seen.push(rvOf((await store.guaranteedUpdate('a', 'x', (e) => ({ ...e!, count: 2 }))).object));
        seen.push(rvOf(await store.delete('b', 'y')));
        seen.push(rvOf(await store.create(sampleEvent('b', 'y'))));
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `revisions ${seen.join(',')}`);
        assert.equal(await store.currentResourceVersion(), seen.at(-1));
        const parallel = await Promise.all(Array.from({ length: 20 }, (_, i) => store.create(sampleEvent('p', `e${i}`))));
        assert.equal(new Set(parallel.map(rvOf)).size, 20);
        assert.equal(await store.currentResourceVersion(), Math.max(...parallel.map(rvOf)));
      }),
    );
  });
}

/** conformanceGuaranteedUpdate registers the cases of `guaranteedUpdate`: retries on conflicts, preconditions, creates, and writes that change nothing. */
export function conformanceGuaranteedUpdate(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
  void describe('guaranteedUpdate', () => {
    it(
      'applies tryUpdate to the current object and writes a new revision',
      withStore(async (store) => {
        const created = await store.create(sampleEvent('default', 'a'));
        let seen: CoreEvent | undefined;
        const r = await store.guaranteedUpdate('default', 'a', (cur) => {
          seen = cur;
          return { ...cur!, count: 2 };
        });
        assert.deepEqual(seen, created);
        assert.equal(r.created, false);
        assert.equal(r.object.count, 2);
        assert.ok(rvOf(r.object) > rvOf(created));
        assert.deepEqual(await store.get('default', 'a'), r.object);
      }),
    );
    it(
      'checks uid and resourceVersion preconditions',
      withStore(async (store) => {
        const created = await store.create(sampleEvent('default', 'a'));
        const bump = (e: CoreEvent | undefined): CoreEvent => ({ ...e!, count: (e!.count ?? 0) + 1 });
        const uidErr = await rejectsWith(store.guaranteedUpdate('default', 'a', bump, { preconditions: { uid: 'other' } }), 'ResourceVersionConflicts');
        assert.match((uidErr as Error).message, /^Precondition failed: UID in precondition: other, UID in object meta: uid-default-a$/);
        const rvErr = await rejectsWith(store.guaranteedUpdate('default', 'a', bump, { preconditions: { resourceVersion: '1000' } }), 'ResourceVersionConflicts');
        assert.match((rvErr as Error).message, /^Precondition failed: ResourceVersion in precondition: 1000,/);
        // The server words its 409 from these fields, not from the message.
        assert.deepEqual((uidErr as StorageError).precondition, { field: 'UID', expected: 'other', actual: 'uid-default-a' });
        assert.deepEqual((rvErr as StorageError).precondition, { field: 'ResourceVersion', expected: '1000', actual: created.metadata.resourceVersion });
        assert.equal(await store.currentResourceVersion(), rvOf(created));
        const ok = await store.guaranteedUpdate('default', 'a', bump, { preconditions: { uid: 'uid-default-a', resourceVersion: created.metadata.resourceVersion! } });
        assert.equal(ok.object.count, 2);
      }),
    );
    it(
      'answers KeyNotFound for a missing key unless allowCreate is set',
      withStore(async (store) => {
        await rejectsWith(store.guaranteedUpdate('default', 'a', (e) => e!), 'KeyNotFound');
        let seen: CoreEvent | undefined | 'not called' = 'not called';
        const r = await store.guaranteedUpdate(
          'default',
          'a',
          (cur) => {
            seen = cur;
            return sampleEvent('default', 'a');
          },
          { allowCreate: true },
        );
        assert.equal(seen, undefined);
        assert.equal(r.created, true);
        assert.deepEqual(await store.get('default', 'a'), r.object);
      }),
    );
    it(
      'retries tryUpdate when concurrent writers win, losing no update',
      withStore(async (store) => {
        await store.create(sampleEvent('default', 'a', { count: 0 }));
        const n = 12;
        const results = await Promise.all(
          Array.from({ length: n }, () =>
            store.guaranteedUpdate('default', 'a', async (cur) => {
              await new Promise((r) => setImmediate(r));
              return { ...cur!, count: (cur!.count ?? 0) + 1 };
            }),
          ),
        );
        assert.equal((await store.get('default', 'a')).count, n);
        assert.equal(new Set(results.map((r) => rvOf(r.object))).size, n);
      }),
    );
    it(
      'passes on what tryUpdate throws and writes nothing',
      withStore(async (store) => {
        await store.create(sampleEvent('default', 'a'));
        const rv = await store.currentResourceVersion();
        const boom = new Error('refused');
        await assert.rejects(
          store.guaranteedUpdate('default', 'a', () => {
            throw boom;
          }),
          (e) => e === boom,
        );
        assert.equal(await store.currentResourceVersion(), rv);
      }),
    );
    it(
      'refuses an update that renames the object with InvalidObject',
      withStore(async (store) => {
        await store.create(sampleEvent('default', 'a'));
        await rejectsWith(store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, metadata: { ...e!.metadata, name: 'b' } })), 'InvalidObject');
      }),
    );
    it(
      'short-circuits an unchanged object: no new revision and no TTL renewal',
      withStore(async (store, env) => {
        const created = await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
        await env.clock.advance(6_000);
        const r = await store.guaranteedUpdate(
          'default',
          'a',
          (cur) => {
            // Same content built in another property order.
            const { message, reason, ...rest } = cur!;
            return { reason, message, ...rest, metadata: { ...cur!.metadata } };
          },
          { ttlSeconds: 10 },
        );
        assert.deepEqual(r.object, created);
        assert.equal(await store.currentResourceVersion(), rvOf(created));
        const w = store.watch({ resourceVersion: rvOf(created) });
        await env.clock.advance(5_000);
        const [gone] = await take(w, 1);
        w.stop();
        assert.equal(gone?.type, 'DELETED');
        await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
      }),
    );
  });
}

/** conformanceDelete registers the cases of `delete`: the last state at the deletion's revision, and preconditions. */
export function conformanceDelete(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
  void describe('delete', () => {
    it(
      'removes the object and returns its last state at the deletion revision',
      withStore(async (store) => {
        const created = await store.create(sampleEvent('default', 'a'));
        const deleted = await store.delete('default', 'a');
        assert.equal(deleted.message, 'event a');
        assert.ok(rvOf(deleted) > rvOf(created));
        assert.equal(await store.currentResourceVersion(), rvOf(deleted));
        await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
        await rejectsWith(store.delete('default', 'a'), 'KeyNotFound');
        assert.deepEqual((await store.list({})).items, []);
        const again = await store.create(sampleEvent('default', 'a', { message: 'again' }));
        assert.equal((await store.get('default', 'a')).message, 'again');
        assert.ok(rvOf(again) > rvOf(deleted));
      }),
    );
    it(
      'checks preconditions and keeps the object when they fail',
      withStore(async (store) => {
        const created = await store.create(sampleEvent('default', 'a'));
        await rejectsWith(store.delete('default', 'a', { preconditions: { uid: 'other' } }), 'ResourceVersionConflicts');
        await rejectsWith(store.delete('default', 'a', { preconditions: { resourceVersion: '12345' } }), 'ResourceVersionConflicts');
        assert.deepEqual(await store.get('default', 'a'), created);
        await store.delete('default', 'a', { preconditions: { uid: 'uid-default-a', resourceVersion: created.metadata.resourceVersion! } });
        await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
      }),
    );
  });
}

/** conformanceTtl registers the cases of `WriteOptions.ttlSeconds`: expiry as a delete that watchers see, renewed by every real write. */
export function conformanceTtl(setup: ConformanceSetup): void {
  const { withStore } = storeCases(setup);
  void describe('TTL', () => {
    it(
      'expires an object: a delete that watchers see as DELETED',
      withStore(async (store, env) => {
        const created = await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
        await store.create(sampleEvent('default', 'forever'), { ttlSeconds: 0 });
        await store.create(sampleEvent('default', 'unset'));
        const w = store.watch({});
        await env.clock.advance(9_000);
        assert.equal((await store.get('default', 'a')).message, 'event a');
        await env.clock.advance(2_000);
        const [e] = await take(w, 1);
        assert.equal(e?.type, 'DELETED');
        assert.equal(e?.object.metadata.name, 'a');
        assert.ok(rvOf(e.object) > rvOf(created));
        await rejectsWith(store.get('default', 'a'), 'KeyNotFound');
        await env.clock.advance(100_000);
        assert.deepEqual(keys((await store.list({})).items), ['default/forever', 'default/unset']);
        await store.create(sampleEvent('default', 'later'));
        const [next] = await take(w, 1);
        w.stop();
        assert.equal(next?.object.metadata.name, 'later', 'nothing else expired');
      }),
    );
    it(
      'renews the TTL on every real write',
      withStore(async (store, env) => {
        await store.create(sampleEvent('default', 'a'), { ttlSeconds: 10 });
        await env.clock.advance(6_000);
        await store.guaranteedUpdate('default', 'a', (e) => ({ ...e!, count: 2 }), { ttlSeconds: 10 });
        await env.clock.advance(6_000);
        assert.equal((await store.get('default', 'a')).count, 2);
        const w = store.watch({});
        await env.clock.advance(5_000);
        const [e] = await take(w, 1);
        w.stop();
        assert.equal(e?.type, 'DELETED');
      }),
    );
  });
}
