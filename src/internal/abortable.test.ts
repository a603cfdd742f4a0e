import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortable } from './abortable.js';

const late = (): Error => new Error('gave up');

void describe('abortable', () => {
  void it('settles as the promise does while the signal holds, rejections included', async () => {
    const c = new AbortController();
    assert.equal(await abortable(Promise.resolve(7), c.signal, late), 7);
    await assert.rejects(abortable(Promise.reject(new Error('no')), c.signal, late), /^Error: no$/);
    assert.equal(await abortable(Promise.resolve(8), undefined, late), 8);
  });

  void it('rejects with the abort error when the signal aborts first, and at once when it had already', async () => {
    const c = new AbortController();
    const never = new Promise<number>(() => {});
    const waiting = abortable(never, c.signal, late);
    c.abort();
    await assert.rejects(waiting, /gave up/);
    await assert.rejects(abortable(never, AbortSignal.abort(), late), /gave up/);
  });
});
