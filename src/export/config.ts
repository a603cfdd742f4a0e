import { readFile } from 'node:fs/promises';
import { DEFAULT_ALERT } from './alerting.js';
import { ConfigError, ConfigReader } from './config-reader.js';
import { readRoute } from './route.js';
import type { Route } from './route.js';
import { SINK_TYPES } from './sinks/index.js';
import { checkFieldPath, checkTemplateFilter, templateReferences } from './template.js';
import type { AlertOptions, PolicyName, SinkType } from './types.js';

/** RetryOptions say how a sink's failed deliveries are retried. */
export interface RetryOptions {
  /** maxAttempts bounds the attempts at a record the sink refuses; then it is dead-lettered. An unavailable sink is retried until it answers. */
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** SinkConfig is one configured sink. */
export interface SinkConfig {
  name: string;
  type: string;
  policy: PolicyName;
  /** start is where a sink with no position yet begins: the start of the archive's log, or its end. */
  start: 'beginning' | 'now';
  batchSize: number;
  retry: RetryOptions;
  /** stuckAfterMs: readiness fails when a sink has had changes to deliver and delivered none for this long. */
  stuckAfterMs: number;
  template?: unknown;
  alert: AlertOptions;
  /** options are the sink type's own options, as its `read` returned them. */
  options: unknown;
  sinkType: SinkType;
}

/** ExportConfig is a whole export config. */
export interface ExportConfig {
  sinks: SinkConfig[];
  route: Route;
}

const POLICIES: readonly PolicyName[] = ['upsert', 'occurrences', 'first', 'alert'];
const COMMON_FIELDS = ['name', 'type', 'policy', 'start', 'batchSize', 'retry', 'stuckAfter', 'template', 'alert'];
const SINK_NAME = /^[a-z0-9]([-a-z0-9_]{0,61}[a-z0-9])?$/;

/** DEFAULT_BATCH_SIZE: a batch is one request to most sinks; 500 records stay well under their request limits. */
export const DEFAULT_BATCH_SIZE = 500;
/** DEFAULT_RETRY: a refused record is tried 5 times over about 8 s; an unreachable sink is retried every 30 s at most. */
export const DEFAULT_RETRY: RetryOptions = { maxAttempts: 5, initialBackoffMs: 500, maxBackoffMs: 30_000 };
/** DEFAULT_STUCK_AFTER_MS: five minutes without a delivery while changes wait is a stuck sink. */
export const DEFAULT_STUCK_AFTER_MS = 300_000;

/** loadExportConfig reads and checks a config file; a ConfigError lists every issue with its line and field. */
export async function loadExportConfig(file: string): Promise<ExportConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ConfigError(file, [{ line: 1, column: 1, field: '', message: `cannot read the file: ${(e as Error).message}` }]);
  }
  return parseExportConfig(text, file);
}

/** parseExportConfig checks a config's text (`file` names it in errors). */
export function parseExportConfig(text: string, file = 'config'): ExportConfig {
  const r = new ConfigReader(text);
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  const root = r.object([], r.root, ['sinks', 'route'], true) ?? {};
  const sinks: SinkConfig[] = [];
  const names = new Set<string>();
  r.list(['sinks'], root.sinks, true).forEach((raw, i) => {
    const sink = readSink(r, ['sinks', i], raw);
    if (sink === undefined) return;
    if (names.has(sink.name)) r.fail(['sinks', i, 'name'], `another sink is named ${JSON.stringify(sink.name)}`);
    names.add(sink.name);
    sinks.push(sink);
  });
  if (Array.isArray(root.sinks) && root.sinks.length === 0) r.fail(['sinks'], 'needs at least one sink');
  // Without a route, every sink receives every change.
  const route: Route =
    root.route === undefined ? { match: [], drop: [], sinks: [...names], routes: [] } : readRoute(r, ['route'], root.route, names);
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  return { sinks, route };
}

function readSink(r: ConfigReader, path: (string | number)[], raw: unknown): SinkConfig | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    r.object(path, raw, [], true);
    return undefined;
  }
  const pre = raw as Record<string, unknown>;
  const type = r.string([...path, 'type'], pre.type, { required: true, oneOf: Object.keys(SINK_TYPES) });
  const sinkType = type === undefined ? undefined : SINK_TYPES[type];
  const o = r.object(path, raw, [...COMMON_FIELDS, ...(sinkType?.fields ?? [])], true)!;
  const name = r.string([...path, 'name'], o.name, { required: true, pattern: SINK_NAME, hint: 'must be lower case letters, digits, - and _ (at most 63)' });
  const policy = r.string([...path, 'policy'], o.policy, { oneOf: POLICIES }) as PolicyName | undefined;
  const start = r.string([...path, 'start'], o.start, { oneOf: ['beginning', 'now'] }) as 'beginning' | 'now' | undefined;
  const batchSize = r.integer([...path, 'batchSize'], o.batchSize, { min: 1, max: 10_000 });
  const retryRaw = r.object([...path, 'retry'], o.retry, ['maxAttempts', 'initialBackoff', 'maxBackoff']) ?? {};
  const retry: RetryOptions = {
    maxAttempts: r.integer([...path, 'retry', 'maxAttempts'], retryRaw.maxAttempts, { min: 1 }) ?? DEFAULT_RETRY.maxAttempts,
    initialBackoffMs: r.duration([...path, 'retry', 'initialBackoff'], retryRaw.initialBackoff) ?? DEFAULT_RETRY.initialBackoffMs,
    maxBackoffMs: r.duration([...path, 'retry', 'maxBackoff'], retryRaw.maxBackoff) ?? DEFAULT_RETRY.maxBackoffMs,
  };
  const stuckAfterMs = r.duration([...path, 'stuckAfter'], o.stuckAfter) ?? DEFAULT_STUCK_AFTER_MS;
  const effectivePolicy = policy ?? sinkType?.defaultPolicy;
  for (const ref of templateReferences(o.template)) {
    const problem =
      checkFieldPath(ref.path) ??
      (ref.filter === undefined ? undefined : checkTemplateFilter(ref.filter)) ??
      (ref.path === 'cause' && effectivePolicy !== undefined && effectivePolicy !== 'alert' ? `cause is given to the alert policy's messages only (this sink's policy is ${effectivePolicy})` : undefined);
    if (problem !== undefined) r.fail([...path, 'template', ...ref.at.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '')], problem);
  }
  const alert = readAlert(r, [...path, 'alert'], o.alert, { ...DEFAULT_ALERT, ...sinkType?.alertDefaults });
  const options = sinkType?.read(r, path, o);
  if (name === undefined || sinkType === undefined || type === undefined) return undefined;
  const sink: SinkConfig = {
    name,
    type,
    policy: policy ?? sinkType.defaultPolicy,
    start: start ?? 'beginning',
    batchSize: batchSize ?? DEFAULT_BATCH_SIZE,
    retry,
    stuckAfterMs,
    alert,
    options,
    sinkType,
  };
  if (o.template !== undefined) sink.template = o.template;
  if (o.alert !== undefined && sink.policy !== 'alert') r.fail([...path, 'alert'], `alerting controls need policy: alert (this sink's policy is ${sink.policy})`);
  return sink;
}

function readAlert(r: ConfigReader, path: (string | number)[], raw: unknown, defaults: AlertOptions): AlertOptions {
  const o = r.object(path, raw, ['minCount', 'for', 'groupWait', 'resolveAfter', 'resendInterval', 'groupBy', 'rateLimit']) ?? {};
  const a: AlertOptions = {
    minCount: r.integer([...path, 'minCount'], o.minCount, { min: 1 }) ?? defaults.minCount,
    forMs: r.duration([...path, 'for'], o.for) ?? defaults.forMs,
    groupWaitMs: r.duration([...path, 'groupWait'], o.groupWait) ?? defaults.groupWaitMs,
    resolveAfterMs: r.duration([...path, 'resolveAfter'], o.resolveAfter) ?? defaults.resolveAfterMs,
    resendIntervalMs: r.duration([...path, 'resendInterval'], o.resendInterval) ?? defaults.resendIntervalMs,
    resolveAll: defaults.resolveAll,
    groupBy: defaults.groupBy,
  };
  if (o.groupBy !== undefined) {
    a.groupBy = r.list([...path, 'groupBy'], o.groupBy).flatMap((v, i) => {
      const p = r.string([...path, 'groupBy', i], v, { required: true });
      const problem = p === undefined ? undefined : checkFieldPath(p);
      if (problem !== undefined) r.fail([...path, 'groupBy', i], problem);
      return p === undefined || problem !== undefined ? [] : [p];
    });
  }
  const limits = r.object([...path, 'rateLimit'], o.rateLimit, ['perReason', 'perObject']) ?? {};
  for (const key of ['perReason', 'perObject'] as const) {
    const text = r.string([...path, 'rateLimit', key], limits[key], { pattern: /^\d+\/\S+$/, hint: 'must be COUNT/DURATION, e.g. 10/1h' });
    if (text === undefined) continue;
    const [n, d] = text.split('/') as [string, string];
    const windowMs = r.duration([...path, 'rateLimit', key], d);
    if (windowMs !== undefined && windowMs > 0 && Number(n) > 0) a[key] = { limit: Number(n), windowMs };
    else if (windowMs !== undefined) r.fail([...path, 'rateLimit', key], 'needs a count and a window above 0');
  }
  return a;
}
