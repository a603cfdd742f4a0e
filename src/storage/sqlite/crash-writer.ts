/**
 * crash-writer is the child process of the kill -9 test: it writes events from
 * 64 concurrent writers and prints each key on stdout once its create has been
 * acknowledged, until it is killed. (stdout is a pipe, which Node writes
 * synchronously on Linux, so a printed key has left the process.)
 */
import { SqliteEventStore } from './index.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: crash-writer <db-path>');
const store = new SqliteEventStore({ path });
await store.ready();
let next = 0;
async function writer(): Promise<never> {
  for (;;) {
    const name = `e${next++}`;
    await store.create({ metadata: { namespace: 'crash', name }, involvedObject: { kind: 'Pod', name: 'p' }, message: name }, { ttlSeconds: 3600 });
    process.stdout.write(`${name}\n`);
  }
}
await Promise.all(Array.from({ length: 64 }, writer));
