/**
 * Index builds on open: an index the schema lacks is built in place, in the setup transaction, with log lines for an
 * archive that holds rows (minutes at millions), and one of an earlier layout is dropped first so that it is built in
 * its new form. A kill during the open rolls the transaction back: the old index, whole, stays.
 */
import type { Logger } from '../../internal/index.js';
import type { PgClient } from './options.js';

/** IndexBuild is one index `buildIndex` builds: its name, its table, the rows' noun and what it orders them by (for the log lines), its CREATE INDEX. */
export interface IndexBuild {
  name: string;
  table: string;
  what: string;
  by: string;
  sql: string;
}

/**
 * buildIndex runs `sql`, which creates index `name` on `table`, when the schema lacks it, in place: the build of a
 * table that holds rows is logged with their count, and then with its time (an archive of millions takes minutes).
 * It tells whether it built one over rows.
 */
export async function buildIndex(client: PgClient, s: string, logger: Pick<Logger, 'info'>, index: IndexBuild): Promise<boolean> {
  const { rows } = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [`${s}.${index.name}`]);
  if (rows[0]?.t != null) return false;
  const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${s}.${index.table}`);
  const n = Number(counted[0]?.n ?? 0);
  const started = performance.now();
  if (n > 0) logger.info(`indexing the ${index.what} by ${index.by}`, { [index.what]: n });
  await client.query(index.sql);
  if (n > 0) logger.info(`the ${index.what} are indexed by ${index.by}`, { [index.what]: n, seconds: Math.round(performance.now() - started) / 1000 });
  return n > 0;
}

/**
 * IndexForm is an index's shape as `rebuildIndex` compares it: how many key columns it holds, whether its first is an
 * expression, and the order of each key (`asc` or `desc`).
 */
export interface IndexForm {
  keys: number;
  expression: boolean;
  order: readonly ('asc' | 'desc')[];
}

/**
 * rebuildIndex builds an index as buildIndex does, first dropping one of that name in another form (an earlier
 * schema's, see IndexForm). It is decided from the index itself, so a database any build left ends in the same form.
 * It tells whether it built one over rows.
 */
export async function rebuildIndex(client: PgClient, s: string, logger: Pick<Logger, 'info'>, index: IndexBuild & IndexForm): Promise<boolean> {
  const { rows } = await client.query<{ keys: number; expression: boolean; options: string }>(
    `SELECT i.indnkeyatts AS keys, i.indkey[0] = 0 AS expression, i.indoption::text AS options FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
    [s, index.name],
  );
  const found = rows[0];
  // indoption's first bit marks a descending key.
  const order = found?.options.split(' ').slice(0, found.keys).map((o) => ((Number(o) & 1) === 1 ? 'desc' : 'asc'));
  if (found !== undefined && (found.keys !== index.keys || found.expression !== index.expression || order!.join(' ') !== index.order.join(' '))) {
    logger.info(`rebuilding the index ${index.name} in its smaller form (once, in place)`, { schema: s, keys: `${found.keys} → ${index.keys}` });
    await client.query(`DROP INDEX ${s}.${index.name}`);
  }
  return buildIndex(client, s, logger, index);
}
