import { hostname } from 'node:os';
import type { ObjectReference } from '../api/index.js';
import { loadKubeConfig, namespaceOf, sinkFromKubeConfig } from '../client/index.js';
import { createEventBroadcaster, createLegacyEventBroadcaster } from '../recorder/index.js';
import { KNOWN_KINDS } from '../server/index.js';
import { createCliLogger } from './cli-logger.js';
import { CliError, UsageError } from './errors.js';
import type { CliIO } from './run.js';

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

/** runRecord emits one event through the recorder (either API) and waits until it is written. */
export async function runRecord(flags: RecordFlags, io: CliIO): Promise<void> {
  if (flags.type !== 'Normal' && flags.type !== 'Warning') throw new UsageError('--type must be Normal or Warning');
  if (flags.api !== 'events.k8s.io/v1' && flags.api !== 'v1') throw new UsageError('--api must be events.k8s.io/v1 or v1');
  if (flags.api === 'events.k8s.io/v1' && (flags.action === undefined || flags.action === '')) {
    throw new UsageError('--action is required for events.k8s.io/v1 events (e.g. --action Reconcile), or use --api v1');
  }
  const kc = await loadKubeConfig(flags);
  const namespace = flags.namespace ?? namespaceOf(kc);
  const regarding = resolveObject(flags.for, namespace, flags.objectApiVersion, flags.uid);
  const logger = createCliLogger(io.stderr);
  const sink = sinkFromKubeConfig(kc);
  if (flags.api === 'v1') {
    const b = createLegacyEventBroadcaster({ sink, logger, maxTries: 3, retrySleepMs: 1000 });
    b.newRecorder({ source: { component: flags.reportingController, host: hostname() } }).event({
      involvedObject: regarding,
      type: flags.type,
      reason: flags.reason,
      message: flags.message,
    });
    await b.shutdown();
    report(b.counters, io, regarding);
    return;
  }
  const b = createEventBroadcaster({ sink, logger, maxTries: 3, retrySleepMs: 1000 });
  b.newRecorder({ reportingController: flags.reportingController }).event({
    regarding,
    type: flags.type,
    reason: flags.reason,
    action: flags.action ?? '',
    note: flags.message,
  });
  await b.shutdown();
  report(b.counters, io, regarding);
}

function report(counters: { written: number; failed: number; rejected: number; dropped: number }, io: CliIO, ref: ObjectReference): void {
  if (counters.written < 1) {
    throw new CliError(
      counters.rejected > 0
        ? 'the event was rejected before it was sent (see the warning above)'
        : 'the event could not be written (see the error above)',
    );
  }
  io.stdout.write(`event recorded for ${ref.kind}/${ref.name}\n`);
}
