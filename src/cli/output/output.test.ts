import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { colourEnabled, createColours } from './colour.js';
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
