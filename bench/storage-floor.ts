/**
 * bench/storage-floor.ts measures what a stored event could cost in other layouts than the row per version of
 * today's SQLite archive, on the events of an archive already written (BENCH_ARCHIVE, a SQLite file such as the
 * one bench/search-vs-victorialogs.ts keeps; opened read-only): the target of issue #51 (≤ 250 bytes an event with
 * the search index) is judged against these figures, not guessed.
 *
 * - objects: the row codec's bytes (what `versions.object` holds) against the same events' JSON compressed in
 *   blocks of BLOCKS consecutive versions (deflate level 6, and brotli quality 5): what one compressed block per
 *   thousand events, as log stores keep them, would take;
 * - search: an FTS5 index of each version's words as the archive's index writes them (the seven text fields, in a
 *   contentless table), built with the archive's docids, with dense docids (1, 2, 3, …: the delta a doclist stores
 *   between two entries of a word is then small), and with one entry per block of 16 and of 64 versions (a search
 *   then reads each candidate block's events and checks them);
 * - the fixed part of a row: the key, the two UUIDs an event carries (its own and its object's: random, 32 bytes
 *   that no layout compresses) and the time columns.
 *
 * Run: BENCH_ARCHIVE=FILE node --import tsx bench/storage-floor.ts   (BENCH_LIMIT caps the versions read)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import Database from 'better-sqlite3';
import { SEARCH_TEXT_FIELDS, searchFieldValue } from '../src/api/index.js';
import type { CoreEvent } from '../src/api/index.js';
import { storedTexts } from '../src/storage/sqlite/texts.js';

const ARCHIVE = process.env.BENCH_ARCHIVE;
if (ARCHIVE === undefined) {
  console.error('storage-floor: set BENCH_ARCHIVE to a SQLite archive file (it is opened read-only)');
  process.exit(2);
}
const LIMIT = Number(process.env.BENCH_LIMIT ?? 1_000_000);
const BLOCKS = [256, 1024, 4096];

const src = new Database(ARCHIVE, { readonly: true, fileMustExist: true });
const texts = storedTexts(src);
const rows = src
  .prepare('SELECT d.docid AS docid, v.object AS object, v.key AS key FROM search_docs d JOIN versions v ON v.rv = d.rv ORDER BY d.docid LIMIT ?')
  .all(LIMIT) as { docid: number; object: Buffer; key: string }[];
src.close();
const n = rows.length;
if (n === 0) {
  console.error('storage-floor: the archive has no indexed versions');
  process.exit(2);
}
const jsons = rows.map((r) => texts.json(r.object));
const events = jsons.map((j) => JSON.parse(j) as CoreEvent);
const per = (bytes: number): string => (bytes / n).toFixed(1);

console.log(`${n} versions of ${ARCHIVE}, in the search index's order (the newest last)`);
const jsonBytes = jsons.reduce((s, j) => s + Buffer.byteLength(j), 0);
const rowBytes = rows.reduce((s, r) => s + r.object.length, 0);
console.log(`\nobjects, bytes an event: JSON ${per(jsonBytes)}, the row codec ${per(rowBytes)}`);
for (const block of BLOCKS) {
  let deflated = 0;
  let brotli = 0;
  for (let i = 0; i < n; i += block) {
    const buf = Buffer.from(jsons.slice(i, i + block).join('\n'));
    deflated += zlib.deflateRawSync(buf, { level: 6 }).length;
    brotli += zlib.brotliCompressSync(buf, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_LGWIN]: 22 } }).length;
  }
  console.log(`  blocks of ${block}: deflate ${per(deflated)}, brotli ${per(brotli)}`);
}

const dir = mkdtempSync(join(tmpdir(), 'kevents-storage-floor-'));
/** ftsBytes builds a contentless FTS5 table of `entries` (docid, each column's text), merged as 'optimize' leaves it, and returns its tables' bytes. */
function ftsBytes(name: string, entries: Iterable<[number, string[]]>): { data: number; docsize: number } {
  const db = new Database(join(dir, `${name}.db`));
  const columns = SEARCH_TEXT_FIELDS.join(', ');
  db.exec(`CREATE VIRTUAL TABLE f USING fts5(${columns}, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0')`);
  const insert = db.prepare(`INSERT INTO f (rowid, ${columns}) VALUES (?, ${SEARCH_TEXT_FIELDS.map(() => '?').join(', ')})`);
  db.transaction(() => {
    for (const [docid, fields] of entries) insert.run(docid, ...fields);
  })();
  db.exec("INSERT INTO f (f) VALUES ('optimize')");
  const size = (t: string): number => (db.prepare('SELECT sum(pgsize) AS b FROM dbstat WHERE name = ?').get(t) as { b: number | null }).b ?? 0;
  const out = { data: size('f_data'), docsize: size('f_docsize') };
  db.close();
  return out;
}
const fieldsOf = (e: CoreEvent): string[] => SEARCH_TEXT_FIELDS.map((f) => searchFieldValue(e, f));
function* perVersion(dense: boolean): Iterable<[number, string[]]> {
  for (let i = 0; i < n; i++) yield [dense ? i + 1 : rows[i]!.docid, fieldsOf(events[i]!)];
}
function* perBlock(block: number): Iterable<[number, string[]]> {
  for (let i = 0; i < n; i += block) {
    const group = events.slice(i, i + block).map(fieldsOf);
    yield [i / block + 1, SEARCH_TEXT_FIELDS.map((_, c) => group.map((g) => g[c]).join(' '))];
  }
}
try {
  console.log('\nsearch index (FTS5 data + docsize), bytes an event:');
  for (const [name, entries] of [
    ["the archive's docids", perVersion(false)],
    ['dense docids', perVersion(true)],
    ['an entry per 16 versions', perBlock(16)],
    ['an entry per 64 versions', perBlock(64)],
  ] as const) {
    const b = ftsBytes(name.replace(/\W+/g, '-'), entries);
    console.log(`  ${name}: ${per(b.data)} + ${per(b.docsize)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const keyBytes = rows.reduce((s, r) => s + Buffer.byteLength(r.key), 0);
console.log(`\nthe fixed part: the key ${per(keyBytes)} bytes (stored in the row and in each key-order index), two UUIDs 32 bytes packed`);
