import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { ExportRecord, ExportSink, SinkType } from '../types.js';

/** JsonLinesOptions configure a JSON lines sink: a file (appended to, synced per batch) or stdout. */
export interface JsonLinesOptions {
  /** path is the file; undefined writes to stdout. */
  path?: string;
}

/**
 * jsonLine is one record as a line: the payload with the record's identity
 * beside it (`id`, `documentId`, `version`), so a pipeline (Fluent Bit,
 * Vector) can deduplicate or upsert.
 */
export function jsonLine(r: ExportRecord): string {
  const head: Record<string, unknown> = { id: r.id, documentId: r.documentId, version: r.version, policy: r.policy };
  if (r.topic !== undefined) head.topic = r.topic;
  if (r.alert !== undefined) head.alert = r.alert;
  return `${JSON.stringify({ ...head, record: r.payload })}\n`;
}

class FileSink implements ExportSink {
  private handle: FileHandle | undefined;
  constructor(private readonly path: string) {}

  async send(records: ExportRecord[]): Promise<void> {
    this.handle ??= await open(this.path, 'a');
    const { size } = await this.handle.stat();
    try {
      // appendFile writes until all is written: a single write() may be short on a filling disk and report no error.
      await this.handle.appendFile(records.map(jsonLine).join(''));
      // Synced before the position moves: a line acknowledged is on disk.
      await this.handle.datasync();
    } catch (e) {
      // A full disk takes part of a batch: cut the file back to whole lines, so the retry (from the same position) leaves no torn line.
      await this.handle.truncate(size).catch(() => undefined);
      throw new Error(`${this.path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }
}

class StdoutSink implements ExportSink {
  send(records: ExportRecord[]): Promise<void> {
    return new Promise((res, rej) => process.stdout.write(records.map(jsonLine).join(''), (e) => (e ? rej(e) : res())));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** fileSinkType writes JSON lines to a file (`path`). */
export const fileSinkType: SinkType<JsonLinesOptions> = {
  fields: ['path'],
  defaultPolicy: 'occurrences',
  read(r, path, raw) {
    const p = r.string([...path, 'path'], raw.path, { required: true });
    return p === undefined ? {} : { path: p };
  },
  create(o) {
    const path = resolve(o.path ?? '');
    mkdirSync(dirname(path), { recursive: true });
    return new FileSink(path);
  },
};

/** stdoutSinkType writes JSON lines to standard output. */
export const stdoutSinkType: SinkType<JsonLinesOptions> = {
  fields: [],
  defaultPolicy: 'occurrences',
  read: () => ({}),
  create: () => new StdoutSink(),
};
