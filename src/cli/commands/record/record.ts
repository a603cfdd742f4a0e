// kevents record: flags (flags.ts) → options → validate → run.
import { hostname } from 'node:os';
import type { ObjectReference } from '../../../api/index.js';
import type { Logger } from '../../../internal/index.js';
import { namespaceOf, RequestConstructionError, sinkFromKubeConfig } from '../../../client/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../../../recorder/index.js';
import type { EventSink, EventWriter } from '../../../recorder/index.js';
import { KNOWN_KINDS } from '../../../server/index.js';
import { createCliLogger } from '../../cli-logger.js';
import { connect, explainTransport, isUnreachable } from '../../flags/connection.js';
import type { Connection } from '../../flags/connection.js';
import { CliError, UsageError } from '../../errors.js';
import type { CliIO } from '../../io.js';

/** RecordFlags are the flags of `kevents record`. */
export interface RecordFlags {
  for: string;
  namespace?: string;
  type: string;
  reason: string;
  action?: string;
  message: string;
  reportingController: string;
  api: string;
  objectApiVersion?: string;
  uid?: string;
  server?: string;
  kubeconfig?: string;
  context?: string;
}

/**
 * resolveObject turns `KIND/NAME` into an ObjectReference. Built-in kinds are
 * found by resource, singular, short name or kind (`po`, `pods`, `Pod`); any other
 * kind (a custom resource) is taken as written, with --object-api-version.
 */
export function resolveObject(spec: string, namespace: string, apiVersion?: string, uid?: string): ObjectReference {
  const parts = spec.split('/');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new UsageError(parts.length > 2 ? 'arguments in resource/name form may not have more than one slash' : '--for must be in resource/name form');
  }
  const [kindText, name] = parts as [string, string];
  const lower = kindText.toLowerCase();
  const known = KNOWN_KINDS.find(
    (k) => k.resource === lower || k.singularName === lower || k.shortNames.includes(lower) || k.kind.toLowerCase() === lower,
  );
  const ref: ObjectReference = {
    kind: known?.kind ?? kindText,
    name,
    apiVersion: apiVersion ?? (known === undefined ? 'v1' : known.group === '' ? known.version : `${known.group}/${known.version}`),
  };
  if (known === undefined || known.namespaced) ref.namespace = namespace;
  if (uid !== undefined) ref.uid = uid;
  return ref;
}

/** RecordOptions are the checked choices of `kevents record`: the event's type and which Event API writes it. */
export interface RecordOptions {
  type: 'Normal' | 'Warning';
  api: 'events.k8s.io/v1' | 'v1';
}

/** recordOptions checks the flags before the server is asked anything. */
export function recordOptions(flags: RecordFlags): RecordOptions {
  if (flags.type !== 'Normal' && flags.type !== 'Warning') throw new UsageError('--type must be Normal or Warning');
  if (flags.api !== 'events.k8s.io/v1' && flags.api !== 'v1') throw new UsageError('--api must be events.k8s.io/v1 or v1');
  if (flags.api === 'events.k8s.io/v1' && (flags.action === undefined || flags.action === '')) {
    throw new UsageError('--action is required for events.k8s.io/v1 events (e.g. --action Reconcile), or use --api v1');
  }
  return { type: flags.type, api: flags.api };
}

/** runRecord emits one event through the recorder (either API) and waits until it is written. */
export async function runRecord(flags: RecordFlags, io: CliIO): Promise<void> {
  const o = recordOptions(flags);
  const conn = await connect(flags, io.env);
  const namespace = flags.namespace ?? namespaceOf(conn.kubeConfig);
  const regarding = resolveObject(flags.for, namespace, flags.objectApiVersion, flags.uid);
  const log = createHeldLogger(createCliLogger(io.stderr));
  const { sink, unreachable } = failFastSink(sinkFromKubeConfig(conn.kubeConfig));
  let counters;
  if (o.api === 'v1') {
    const b = createLegacyEventBroadcaster({ sink, logger: log.logger, maxTries: 3, retrySleepMs: 1000 });
    b.newRecorder({ source: { component: flags.reportingController, host: hostname() } }).event({
      involvedObject: regarding,
      type: o.type,
      reason: flags.reason,
      message: flags.message,
    });
    await b.shutdown();
    counters = b.counters;
  } else {
    const b = createEventBroadcaster({ sink, logger: log.logger, maxTries: 3, retrySleepMs: 1000 });
    b.newRecorder({ reportingController: flags.reportingController }).event({
      regarding,
      type: o.type,
      reason: flags.reason,
      action: flags.action ?? '',
      note: flags.message,
    });
    await b.shutdown();
    counters = b.counters;
  }
  // A server that cannot be reached at all gets one line that says what to do, not the recorder's log.
  const cause = unreachable();
  if (cause !== undefined && counters.written < 1) throw explainTransport(cause, conn);
  log.release();
  report(counters, io, regarding, conn);
}

/**
 * createHeldLogger holds the recorder's lines back until release, so that a
 * failure explained in one line (an unreachable server) is not buried under them.
 */
function createHeldLogger(out: Logger): { logger: Logger; release(): void } {
  const held: (() => void)[] = [];
  return {
    logger: {
      error: (m, f) => held.push(() => out.error(m, f)),
      warn: (m, f) => held.push(() => out.warn(m, f)),
      info: (m, f) => held.push(() => out.info(m, f)),
      debug: () => undefined,
    },
    release: () => held.splice(0).forEach((line) => line()),
  };
}

/**
 * failFastSink ends the recorder's retries when nothing answers at the
 * server's address: a one-shot command should say so at once rather than
 * sleep through its retries. It remembers the first such failure.
 */
function failFastSink(sink: EventSink): { sink: EventSink; unreachable: () => unknown } {
  let first: unknown;
  const guard = <T>(w: EventWriter<T>): EventWriter<T> => {
    const call = async <R>(fn: () => Promise<R>): Promise<R> => {
      try {
        return await fn();
      } catch (e) {
        if (!isUnreachable(e)) throw e;
        first ??= e;
        throw new RequestConstructionError((e as Error).message, { cause: e });
      }
    };
    return {
      create: (ns, ev, o) => call(() => w.create(ns, ev, o)),
      update: (ns, ev, o) => call(() => w.update(ns, ev, o)),
      patch: (ns, name, p, o) => call(() => w.patch(ns, name, p, o)),
    };
  };
  return { sink: { coreV1: guard(sink.coreV1), eventsV1: guard(sink.eventsV1) }, unreachable: () => first };
}

function report(counters: { written: number; failed: number; rejected: number; dropped: number }, io: CliIO, ref: ObjectReference, conn: Connection): void {
  if (counters.written < 1) {
    throw new CliError(
      counters.rejected > 0
        ? 'the event was rejected before it was sent (see the warning above)'
        : `the event could not be written to ${conn.server.origin} (see the error above)`,
    );
  }
  io.stdout.write(`event recorded for ${ref.kind}/${ref.name}\n`);
}
