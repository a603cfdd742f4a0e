import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPeers } from './control-plane.js';
import { freePorts } from './ports.js';
import { dirs, serverProcess } from './sink-servers.js';
import type { SinkServer } from './sink-servers.js';

/**
 * The real OpenTelemetry Collector of the OTLP sink's tests (`otelcol`, built by scripts/peers.mjs
 * with the collector builder): an `otlp` receiver (OTLP/HTTP) written by a file exporter to
 * `otlp.jsonl`, and, given a kubeconfig, the contrib `k8s_events` receiver watching that cluster,
 * written by another file exporter to `receiver.jsonl`. Both files are OTLP/JSON, one
 * ExportLogsServiceRequest a line, appended across restarts.
 */

/** OtlpKeyValue is an OTLP/JSON attribute. */
export interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

/** OtlpLogRecord is one OTLP/JSON log record with its resource's attributes beside it. */
export interface OtlpLogRecord {
  resource: OtlpKeyValue[];
  scope: Record<string, unknown>;
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: number;
  severityText?: string;
  body?: { stringValue?: string };
  attributes: OtlpKeyValue[];
  /** the rest, should a record carry anything else (trace ids, flags, dropped counts). */
  [other: string]: unknown;
}

/** Collector is a running collector. */
export interface Collector extends SinkServer {
  /** otlpUrl is the base URL of the (first) OTLP/HTTP receiver; the sink adds /v1/logs. */
  otlpUrl: string;
  /** otlpUrls are the base URLs of the OTLP/HTTP receivers, by name. */
  otlpUrls: Record<string, string>;
  /** received reads every log record an otlp receiver's file holds (the first one's by default). */
  received(receiver?: string): OtlpLogRecord[];
  /** watched reads every log record the k8s_events receiver's file holds. */
  watched(): OtlpLogRecord[];
}

/** readOtlpFile flattens an OTLP/JSON lines file into its log records; a torn last line (a kill mid-write) is skipped. */
export function readOtlpFile(path: string): OtlpLogRecord[] {
  if (!existsSync(path)) return [];
  const records: OtlpLogRecord[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let req: { resourceLogs?: { resource?: { attributes?: OtlpKeyValue[] }; scopeLogs?: { scope?: Record<string, unknown>; logRecords?: Omit<OtlpLogRecord, 'resource' | 'scope'>[] }[] }[] };
    try {
      req = JSON.parse(line) as typeof req;
    } catch {
      continue;
    }
    for (const rl of req.resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const lr of sl.logRecords ?? []) records.push({ ...lr, resource: rl.resource?.attributes ?? [], scope: sl.scope ?? {}, attributes: lr.attributes ?? [] } as OtlpLogRecord);
      }
    }
  }
  return records;
}

/** attribute reads one attribute's value (ints as numbers), undefined when absent. */
export function attribute(kvs: OtlpKeyValue[], key: string): string | number | boolean | undefined {
  const v = kvs.find((kv) => kv.key === key)?.value;
  if (v === undefined) return undefined;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.boolValue ?? v.doubleValue;
}

/**
 * startCollector runs the collector from a fresh directory: one otlp receiver (OTLP/HTTP) per name
 * in `receivers` (default: one), each on a free loopback port and written to a file of its own,
 * (or, with `exporter: 'debug'`, counted by the debug exporter), and the k8s_events receiver when
 * a kubeconfig is given (in UTC, since it prints
 * `k8s.event.start_time` in the collector's time zone). The file exporters flush every 100 ms; a
 * test that SIGKILLs the collector waits that long after its last acknowledged write.
 */
export async function startCollector(o: { kubeconfig?: string; receivers?: string[]; exporter?: 'file' | 'debug' } = {}): Promise<Collector> {
  const bin = findPeers().otelcol;
  if (bin === undefined) throw new Error('scripts/peers.mjs names no otelcol (run node scripts/peers.mjs --only otelcol)');
  const dir = mkdtempSync(join(tmpdir(), 'kevents-otelcol-'));
  dirs.add(dir);
  const names = o.receivers ?? ['otlp'];
  const ports = await freePorts(names.length);
  const fileOf = (name: string): string => join(dir, `${name}.jsonl`);
  // A bench counts records with the debug exporter (one log line per request) instead of writing them out.
  const kind = o.exporter ?? 'file';
  const exporter = (name: string): string[] =>
    kind === 'debug' ? [`  debug/${name}:`, '    verbosity: basic'] : [`  file/${name}:`, `    path: ${fileOf(name)}`, '    append: true', '    flush_interval: 100ms'];
  const pipeline = (name: string, receiver: string): string[] => [`    logs/${name}:`, `      receivers: [${receiver}]`, `      exporters: [${kind}/${name}]`];
  const watch = o.kubeconfig !== undefined;
  const config = [
    'receivers:',
    ...names.flatMap((name, i) => [`  otlp/${name}:`, '    protocols:', '      http:', `        endpoint: 127.0.0.1:${ports[i]!}`]),
    ...(watch ? ['  k8s_events:', '    auth_type: kubeConfig'] : []),
    'exporters:',
    ...names.flatMap(exporter),
    ...(watch ? exporter('receiver') : []),
    'service:',
    '  telemetry:',
    // No metrics server: its fixed port (8888) would clash with a collector of another test file.
    '    metrics:',
    '      level: none',
    '  pipelines:',
    ...names.flatMap((name) => pipeline(name, `otlp/${name}`)),
    ...(watch ? pipeline('receiver', 'k8s_events') : []),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'config.yaml'), config);
  const env = { ...process.env, TZ: 'UTC', ...(watch ? { KUBECONFIG: o.kubeconfig } : {}) };
  const urls = Object.fromEntries(names.map((name, i) => [name, `http://127.0.0.1:${ports[i]!}`]));
  const server = await serverProcess('otelcol', () => spawn(bin, ['--config', join(dir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'], env }), ports.at(-1)!, urls[names[0]!]!, dir);
  return {
    ...server,
    otlpUrl: server.address,
    otlpUrls: urls,
    received: (receiver = names[0]!) => readOtlpFile(fileOf(receiver)),
    watched: () => readOtlpFile(fileOf('receiver')),
  };
}
