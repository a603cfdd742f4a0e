import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storedInvolvedName, storedLabels } from './stored-labels.js';

void describe('storedLabels', () => {
  const cases: [string, unknown][] = [
    ['no labels', { kind: 'Event', metadata: { name: 'a', namespace: 'n' } }],
    ['no metadata', { kind: 'Event' }],
    ['labels first', { metadata: { labels: { app: 'web' }, name: 'a' } }],
    ['empty labels', { metadata: { name: 'a', labels: {} } }],
    [
      'members before it that hold "labels" in every form',
      {
        kind: 'Event',
        apiVersion: 'v1',
        involvedObject: { labels: { wrong: 'yes' } },
        metadata: {
          name: 'a"labels":{"x":"y"}\\',
          generation: 3,
          deletionGracePeriodSeconds: null,
          finalizers: ['labels', '{"labels":{}}'],
          annotations: { labels: '{"labels":{"no":"1"}}', 'a\\"b': 'c\\' },
          managedFields: [{ fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } }, labels: { no: '2' } }],
          ownerReferences: [{ controller: true, name: '[' }],
          labels: { tier: 'frontend', 'example.com/é': 'ü', quote: 'a"b', empty: '' },
        },
        message: 'labels',
      },
    ],
    ['a key written with an escape', JSON.parse('{"metadata":{"lab\\u0065ls":{"x":"1"}}}')],
    ['a control character in a key', { metadata: { 'a\nb': 1, labels: { k: 'v\n' } } }],
  ];
  for (const [name, value] of cases) {
    it(`reads what JSON.parse does: ${name}`, () => {
      const json = JSON.stringify(value);
      assert.deepEqual(storedLabels(json), (JSON.parse(json) as { metadata?: { labels?: unknown } }).metadata?.labels);
    });
  }
  it('reads text with spaces, as a stored object written by hand would be', () => {
    const json = '{ "kind" : "Event" , "metadata" : { "name" : "a" , "count" : 12 , "labels" : { "a" : "b" } } }';
    assert.deepEqual(storedLabels(json), { a: 'b' });
  });
  it('parses text that is not JSON.stringify\'s whole, and fails as JSON.parse does on what is not JSON', () => {
    assert.deepEqual(storedLabels('{"metadata":{"labels":{"a":"b"}},"x":[1,2}'.replace('[1,2}', '[1,2]}')), { a: 'b' });
    assert.throws(() => storedLabels('{"metadata":{"name":"a",labels:{}}}'), SyntaxError);
  });
});

void describe('storedInvolvedName', () => {
  const cases: [string, unknown][] = [
    ['no involved object', { kind: 'Event', metadata: { name: 'a' } }],
    ['an involved object without a name', { involvedObject: { kind: 'Node' } }],
    ['a null involved object', { involvedObject: null }],
    [
      'members before it that hold "name" in every form',
      {
        metadata: { name: 'wrong', labels: { name: 'no' } },
        involvedObject: { kind: 'Pod', namespace: '"name":"x"', fieldPath: 'spec.containers{name}', name: 'web-0 "é"\\' },
        related: { name: 'other' },
      },
    ],
    ['a name written with an escape', JSON.parse('{"involvedObject":{"n\u0061me":"web-\u0031"}}')],
  ];
  for (const [name, value] of cases) {
    it(`reads what JSON.parse does: ${name}`, () => {
      const json = JSON.stringify(value);
      assert.equal(storedInvolvedName(json), (JSON.parse(json) as { involvedObject?: { name?: string } | null }).involvedObject?.name);
    });
  }
});
