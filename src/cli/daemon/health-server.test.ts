import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { listenHealth } from './health-server.js';

void test('listenHealth names a failed check on /readyz and says why only with ?verbose', async () => {
  let ready = false;
  const health = await listenHealth({
    host: '127.0.0.1',
    port: 0,
    registry: new Registry(),
    checks: () => [{ name: 'mirror', check: () => ({ ready, message: 'source https://10.0.0.1:6443 unreachable: ECONNREFUSED' }) }],
  });
  try {
    const plain = await fetch(`${health.origin}/readyz`);
    assert.equal(plain.status, 500);
    assert.equal(await plain.text(), '[-]mirror failed: reason withheld\nreadyz check failed');
    const verbose = await fetch(`${health.origin}/readyz?verbose`);
    assert.equal(verbose.status, 500);
    assert.equal(await verbose.text(), '[-]mirror failed: source https://10.0.0.1:6443 unreachable: ECONNREFUSED\nreadyz check failed');
    ready = true;
    const ok = await fetch(`${health.origin}/readyz`);
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), 'ok');
  } finally {
    await health.close();
  }
});
