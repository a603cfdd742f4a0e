import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { colourEnabled, createColours } from './colour.js';
import { goYaml } from './go-yaml.js';
import { createProgress, PROGRESS_DELAY_MS } from './progress.js';

function stream(tty: boolean): Writable & { text: string } {
  const s = new Writable({
    write(chunk: Buffer | string, _e, cb) {
      s.text += chunk.toString();
      cb();
    },
  }) as Writable & { text: string; isTTY?: boolean };
  s.text = '';
  if (tty) s.isTTY = true;
  return s;
}

/** written reads what a stream received (a call, so that earlier assertions do not narrow its type). */
function written(s: { text: string }): string {
  return s.text;
}

describe('colourEnabled', () => {
  const cases: [string, boolean, NodeJS.ProcessEnv, boolean][] = [
    ['a terminal', true, {}, true],
    ['a pipe', false, {}, false],
    ['a pipe, even when forced', false, { FORCE_COLOR: '1' }, false],
    ['NO_COLOR set', true, { NO_COLOR: '1' }, false],
    ['NO_COLOR empty', true, { NO_COLOR: '' }, true],
    ['a dumb terminal', true, { TERM: 'dumb' }, false],
  ];
  for (const [name, tty, env, want] of cases) it(name, () => assert.equal(colourEnabled(stream(tty), env), want));
  it('wraps text in SGR codes only when enabled', () => {
    assert.equal(createColours(stream(true), {}).warning('W'), '\x1b[33mW\x1b[39m');
    assert.equal(createColours(stream(false), {}).warning('W'), 'W');
  });
});

describe('createProgress', () => {
  it('draws nothing for quick reads and on pipes, and erases what it drew', () => {
    let now = 0;
    const tty = stream(true);
    const p = createProgress({ stream: tty, env: { NO_COLOR: '1' }, label: 'reading', now: () => now });
    p.update(10);
    assert.equal(tty.text, '');
    now = PROGRESS_DELAY_MS + 1;
    p.update(12_345);
    assert.equal(tty.text, '\rreading 12,345…\x1b[K');
    p.done();
    assert.match(written(tty), /\r\x1b\[K$/);
    const pipe = stream(false);
    const q = createProgress({ stream: pipe, env: {}, label: 'reading', now: () => now + 10_000 });
    q.update(1);
    q.done();
    assert.equal(pipe.text, '');
  });
});

describe('goYaml', () => {
  const cases: [string, unknown, string][] = [
    ['sorted keys, sequences at the key\'s indent', { b: [{ y: 1, x: 'a' }], a: {} }, 'a: {}\nb:\n- x: a\n  "y": 1\n'],
    ['strings (and keys) that read back as other types are double-quoted', { t: '2025-01-01T00:00:00Z', n: '12', e: '', b: 'yes', c: '12:30' }, 'b: "yes"\nc: "12:30"\ne: ""\n"n": "12"\nt: "2025-01-01T00:00:00Z"\n'],
    ['indicators force single quotes', { m: 'a: b', h: '#x', q: "it's" }, "h: '#x'\nm: 'a: b'\nq: it's\n"],
    ['line breaks make a literal block', { m: 'one\ntwo' }, 'm: |-\n  one\n  two\n'],
    ['control characters make a double-quoted string', { m: 'red \x1b[31m' }, 'm: "red \\e[31m"\n'],
    ['long plain text folds at the first space past column 80', { m: `${'word '.repeat(20)}end` }, `m: ${'word '.repeat(15)}word\n  word word word word end\n`],
  ];
  for (const [name, value, want] of cases) it(name, () => assert.equal(goYaml(value), want));
});
