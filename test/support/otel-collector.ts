import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPeers } from './control-plane.js';
import { dirs, freePort, serverProcess } from './sink-servers.js';
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
  /** otlpUrl is the base URL of the OTLP/HTTP receiver (the sink adds /v1/logs). */
  otlpUrl: string;
  /** received reads every log record the otlp receiver's file holds. */
  received(): OtlpLogRecord[];
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
 * startCollector runs the collector from a fresh directory: the otlp receiver on a free loopback
 * port, the k8s_events receiver when a kubeconfig is given (in UTC, since it prints
 * `k8s.event.start_time` in the collector's time zone). The file exporters flush every 100 ms; a
 * test that SIGKILLs the collector waits that long after its last acknowledged write.
 */
export async function startCollector(o: { kubeconfig?: string } = {}): Promise<Collector> {
  const bin = findPeers().otelcol;
  if (bin === undefined) throw new Error('scripts/peers.mjs names no otelcol (run node scripts/peers.mjs --only otelcol)');
  const dir = mkdtempSync(join(tmpdir(), 'kevents-otelcol-'));
  dirs.add(dir);
  const port = await freePort();
  const file = (name: string): string => `    path: ${join(dir, name)}\n    append: true\n    flush_interval: 100ms\n`;
  const config = [
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: 127.0.0.1:${port}`,
    ...(o.kubeconfig !== undefined ? ['  k8s_events:', '    auth_type: kubeConfig'] : []),
    'exporters:',
    '  file/otlp:',
    file('otlp.jsonl'),
    '  file/receiver:',
    file('receiver.jsonl'),
    'service:',
    '  telemetry:',
    // No metrics server: its fixed port (8888) would clash with a collector of another test file.
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    logs/otlp:',
    '      receivers: [otlp]',
    '      exporters: [file/otlp]',
    ...(o.kubeconfig !== undefined ? ['    logs/receiver:', '      receivers: [k8s_events]', '      exporters: [file/receiver]'] : []),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'config.yaml'), config);
  const env = { ...process.env, TZ: 'UTC', ...(o.kubeconfig !== undefined ? { KUBECONFIG: o.kubeconfig } : {}) };
  const server = await serverProcess('otelcol', () => spawn(bin, ['--config', join(dir, 'config.yaml')], { stdio: ['ignore', 'pipe', 'pipe'], env }), port, `http://127.0.0.1:${port}`, dir);
  return {
    ...server,
    otlpUrl: server.address,
    received: () => readOtlpFile(join(dir, 'otlp.jsonl')),
    watched: () => readOtlpFile(join(dir, 'receiver.jsonl')),
  };
}
