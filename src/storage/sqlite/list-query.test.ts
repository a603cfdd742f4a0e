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

const since: ListScope['activeIn'] = { sinceMs: Date.UTC(2025, 0, 1), untilMs: Date.UTC(2025, 0, 2) };
const failures: AnyOf = { types: ['Warning'], reasons: ['Killing', 'BackOff'], kinds: ['Deployment'] };

void test('a latest read of the failures since a time (activeIn with anyOf) is a range of cur_since, tested on its columns', () => {
  for (const high of [undefined, 'ns0']) {
    const scope: ListScope = { at: 10, latest: true, high, fieldEquals: { reason: 'BackOff' }, activeIn: since, anyOf: failures };
    const plan = queries.explainSince(scope);
    const text = plan.join('\n');
    assert.deepEqual(plan, ['SEARCH versions USING INDEX cur_since (<expr>>?)'], text);
  }
});

void test('a read of a window that another index or a reason kept whenever serves better is no read of cur_since', () => {
  const served = (scope: Omit<ListScope, 'at' | 'high' | 'fieldEquals'> & { fieldEquals?: ListScope['fieldEquals'] }): boolean =>
    queries.pageSince({ at: 10, high: undefined, fieldEquals: undefined, ...scope }, '', 10) !== undefined;
  assert.equal(served({ latest: true, activeIn: since, anyOf: failures }), true);
  assert.equal(served({ latest: false, activeIn: since, anyOf: failures }), false, 'a snapshot reads history too');
  assert.equal(served({ latest: true, activeIn: since }), false, 'a whole window is most of its rows');
  assert.equal(served({ latest: true, activeIn: { untilMs: Date.UTC(2025, 0, 2) }, anyOf: failures }), false, 'no start');
  assert.equal(served({ latest: true, activeIn: { ...since, alwaysReasons: ['Scheduled'] }, anyOf: failures }), false, 'a reason kept whenever it happened');
  assert.equal(served({ latest: true, activeIn: since, anyOf: failures, fieldEquals: { 'involvedObject.name': 'web' } }), false, "one object's events are read by its name");
});
