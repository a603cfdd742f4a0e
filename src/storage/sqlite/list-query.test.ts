import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { AnyOf, IndexedField } from '../event-store.js';
import { ListQueries } from './list-query.js';
import type { ListScope } from './list-query.js';
import { applySchema } from './schema.js';

const db = new Database(':memory:');
applySchema(db);
const queries = new ListQueries(db);

const cases: { name: string; fieldEquals?: Partial<Record<IndexedField, string>>; anyOf?: AnyOf; namespace?: boolean; index: string }[] = [
  { name: 'all namespaces', index: 'key' },
  { name: 'one namespace', namespace: true, index: 'key' },
  { name: 'involvedObject.name', fieldEquals: { 'involvedObject.name': 'web' }, index: 'involved_hash' },
  { name: 'namespace + involvedObject.name', namespace: true, fieldEquals: { 'involvedObject.name': 'web' }, index: 'involved_hash' },
  { name: 'involvedObject.kind + involvedObject.name', fieldEquals: { 'involvedObject.kind': 'Pod', 'involvedObject.name': 'web' }, index: 'involved_hash' },
  { name: 'type (few values, read in key order)', namespace: true, fieldEquals: { type: 'Warning' }, index: 'key' },
  { name: 'reason', fieldEquals: { reason: 'BackOff' }, index: 'key' },
  { name: 'involvedObject.namespace alone uses the key order', fieldEquals: { 'involvedObject.namespace': 'x' }, index: 'key' },
  { name: 'anyOf (types, reasons and kinds, read in key order)', anyOf: { types: ['Warning'], reasons: ['Killing', 'BackOff'], kinds: ['Deployment'] }, index: 'key' },
  { name: 'anyOf + involvedObject.name', fieldEquals: { 'involvedObject.name': 'web' }, anyOf: { types: ['Warning'] }, index: 'involved_hash' },
  { name: 'an anyOf that lists nothing', namespace: true, anyOf: {}, index: 'key' },
];

for (const c of cases) {
  for (const latest of [true, false]) {
    void test(`a ${latest ? 'latest' : 'snapshot'} page filtered by ${c.name} is a keyset range scan on index *_${c.index}`, () => {
      const scope: ListScope = { at: 10, latest, high: c.namespace === true ? 'ns0' : undefined, fieldEquals: c.fieldEquals, anyOf: c.anyOf };
      const plan = queries.explain(scope);
      const text = plan.join('\n');
      assert.doesNotMatch(text, /TEMP B-TREE/, `no sort:\n${text}`);
      assert.doesNotMatch(text, /\bSCAN\b/, `no full scan:\n${text}`);
      const used = plan.filter((l) => l.startsWith('SEARCH')).map((l) => /USING (?:COVERING )?INDEX (\w+)/.exec(l)?.[1]);
      assert.deepEqual(used, latest ? [`cur_${c.index}`] : [`cur_${c.index}`, `hist_${c.index}`], text);
      assert.ok(plan.every((l) => !l.startsWith('SEARCH') || /key>\?/.test(l)), `pages start at a key, never at an offset:\n${text}`);
      if (!latest) assert.match(text, /MERGE \(UNION ALL\)/);
    });
  }
}
