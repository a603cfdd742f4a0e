/**
 * The indexes of `occurrences` beside its primary key, each a name's hash, then the primary key's order (schema 7).
 * Every read through one compares the name's columns too (`eventOf`, `regardingOf`, `regardingInOf`), so two names
 * of one hash only cost a row read: the hash stands for the name in the index, 8 bytes where the names were 20-60.
 * Each read asks for one name (an event, an object), never a range of names, so no read needs them in name order.
 */
import type { Logger } from '../../internal/index.js';
import { rebuildIndex } from './build-index.js';
import type { PgClient } from './options.js';

/** hashOf is the SQL of a name's hash: `hashtextextended` (immutable, 64 bits, the same on every server of a major version and since 11) of the name's parts joined by `/`, which no namespace holds. */
export function hashOf(...parts: string[]): string {
  return `hashtextextended(${parts.join(" || '/' || ")}, 0)`;
}

/** EVENT_HASH is what `occ_event` holds first: the hash of an occurrence's event, its namespace and name. */
export const EVENT_HASH = hashOf('namespace', 'event_name');
/** REGARDING_HASH is what `occ_regarding` holds first: the hash of the regarding object's name. */
export const REGARDING_HASH = hashOf('regarding_name');
/** REGARDING_IN_HASH is what `occ_regarding_ns` holds first: the hash of the regarding object's name and namespace. */
export const REGARDING_IN_HASH = hashOf('regarding_name', 'namespace');

/** eventOf is the condition that selects one event's occurrences through `occ_event`: the hash and the columns (SQL of each). */
export function eventOf(namespace: string, name: string): string {
  return `${EVENT_HASH} = ${hashOf(namespace, name)} AND namespace = ${namespace} AND event_name = ${name}`;
}

/** regardingOf is the condition that selects one object's occurrences, in any namespace, through `occ_regarding`. */
export function regardingOf(name: string): string {
  return `${REGARDING_HASH} = ${hashOf(name)} AND regarding_name = ${name}`;
}

/** regardingInOf is the condition that selects one object's occurrences in one namespace through `occ_regarding_ns`. */
export function regardingInOf(name: string, namespace: string): string {
  return `${REGARDING_IN_HASH} = ${hashOf(name, namespace)} AND regarding_name = ${name} AND namespace = ${namespace}`;
}

/**
 * OCCURRENCE_INDEXES are the indexes of `occurrences` built after its table, in place, when the schema lacks them or
 * holds them in an earlier form (the names themselves first, which took 85, 94 and 114 B/event at 100,000 events).
 *
 * - `occ_regarding`: one regarding name's occurrences, every namespace's (the object a timeline asks for).
 * - `occ_regarding_ns`: one regarding name's in one namespace. A cluster reuses its objects' names across namespaces
 *   (web-1, db-0, a Deployment per team), so one object's occurrences in one namespace (an object's timeline) read
 *   through `occ_regarding` every namespace's occurrences of that name and drop the others row by row: on the
 *   1,000,000-event bench archive, 40 namespaces share each name.
 * - `occ_event`: one event's occurrences (what the search route reads for each hit), read without stepping over the
 *   other events about its object, hundreds a hit in a long archive (a StatefulSet's pod).
 */
const OCCURRENCE_INDEXES = [
  { name: 'occ_regarding', first: REGARDING_HASH, by: 'object' },
  { name: 'occ_regarding_ns', first: REGARDING_IN_HASH, by: 'object and namespace' },
  { name: 'occ_event', first: EVENT_HASH, by: 'event' },
] as const;

/** indexOccurrences builds each of OCCURRENCE_INDEXES the schema lacks or holds in an earlier form, logging the build of an archive that holds occurrences. */
export async function indexOccurrences(client: PgClient, s: string, logger: Pick<Logger, 'info'>): Promise<void> {
  for (const index of OCCURRENCE_INDEXES) {
    await rebuildIndex(client, s, logger, {
      name: index.name,
      keys: 3,
      expression: true,
      order: ['asc', 'asc', 'asc'],
      table: 'occurrences',
      what: 'occurrences',
      by: index.by,
      sql: `CREATE INDEX ${index.name} ON ${s}.occurrences ((${index.first}), observed_us, id)`,
    });
  }
}
