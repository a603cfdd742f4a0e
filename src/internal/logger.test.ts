import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CollectingLogger, createConsoleLogger, noopLogger } from './logger.js';

function sink(): { lines: string[]; write(s: string): void } {
  const lines: string[] = [];
  return { lines, write: (s) => lines.push(s) };
}

void test('console logger writes JSON lines at or above its level', () => {
  const out = sink();
  const log = createConsoleLogger({ level: 'warn', stream: out, now: () => 0 });
  log.debug('hidden');
  log.info('hidden too');
  log.warn('careful', { n: 1 });
  log.error('broken', { err: new TypeError('bad') });
  assert.equal(out.lines.length, 2);
  assert.ok(out.lines.every((l) => l.endsWith('\n')));
  assert.deepEqual(JSON.parse(out.lines[0]!), { time: '1970-01-01T00:00:00.000Z', level: 'warn', msg: 'careful', n: 1 });
  assert.deepEqual(JSON.parse(out.lines[1]!).err, { name: 'TypeError', message: 'bad' });
});

void test('console logger defaults to info and survives unserialisable fields', () => {
  const out = sink();
  const log = createConsoleLogger({ stream: out });
  log.debug('hidden');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  log.info('odd', { cyclic });
  assert.equal(out.lines.length, 1);
  assert.equal(JSON.parse(out.lines[0]!).fields, '<unserialisable>');
});

void test('collecting logger keeps entries by level; noop logger accepts everything', () => {
  const log = new CollectingLogger();
  log.warn('w', { a: 1 });
  log.error('e');
  assert.deepEqual(log.messages(), ['w', 'e']);
  assert.deepEqual(log.messages('error'), ['e']);
  assert.deepEqual(log.entries[0], { level: 'warn', msg: 'w', fields: { a: 1 } });
  noopLogger.error('ignored');
});
