/**
 * Many watchers of one events collection over HTTPS, each on its own TLS socket,
 * in a worker thread of the bench, so that reading thousands of frames does not
 * delay the writer that timestamps the events. A watcher reads raw bytes and
 * looks only for the send time written into each event's message
 * (`"message":"sent <ms>"`); the latency of a frame is the time from the send
 * of its create to the read. No HTTP parser and no JSON decoding: a full client
 * per watcher takes more CPU than the server it measures on 2 cores. Both
 * servers write whole frames per chunk, so only a TCP segment can cut a frame,
 * and `carry` joins its two parts; a frame a chunk boundary cuts anyway is not
 * counted as delivered (its send time does not read as a number).
 */
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const tls = require('node:tls');
const { url, path, token, ca, watchers } = workerData;
const target = new URL(url);
const SENT = Buffer.from('"message":"sent ');
const lat = [];
const socks = [];
let open = 0;
let settled = 0;
function settle() {
  if (++settled === watchers) parentPort.postMessage({ open });
}
for (let i = 0; i < watchers; i++) {
  const sock = tls.connect({ host: target.hostname, port: Number(target.port), ca, ALPNProtocols: ['http/1.1'] });
  socks.push(sock);
  let carry;
  let started = false;
  sock.on('secureConnect', () => sock.write('GET ' + path + ' HTTP/1.1\\r\\nHost: ' + target.host + '\\r\\nAuthorization: Bearer ' + token + '\\r\\nAccept: application/json\\r\\n\\r\\n'));
  sock.on('data', (d) => {
    if (!started) {
      started = true;
      if (d.subarray(0, 12).toString('latin1') === 'HTTP/1.1 200') open++;
      settle();
    }
    const now = performance.timeOrigin + performance.now();
    const buf = carry === undefined ? d : Buffer.concat([carry, d]);
    let pos = 0;
    for (;;) {
      const at = buf.indexOf(SENT, pos);
      if (at < 0) break;
      const end = buf.indexOf(0x22, at + SENT.length);
      if (end < 0) break;
      // A send time cut by a chunk's size line (a server that splits a frame across chunks) is not a number: not counted.
      const sent = Number(buf.toString('latin1', at + SENT.length, end));
      if (Number.isFinite(sent)) lat.push(now - sent);
      pos = end + 1;
    }
    const keepFrom = Math.max(pos, buf.lastIndexOf(0x0a) + 1);
    carry = keepFrom < buf.length ? Buffer.from(buf.subarray(keepFrom)) : undefined;
  });
  sock.on('error', () => {
    if (!started) {
      started = true;
      settle();
    }
  });
}
parentPort.on('message', () => {
  for (const s of socks) s.destroy();
  parentPort.postMessage({ lat: Float64Array.from(lat) });
});
`;

/** TlsWatchers are running watchers: how many opened (answered 200), and `stop` to end them and collect every frame's latency. */
export interface TlsWatchers {
  open: number;
  stop(): Promise<Float64Array>;
}

/** openTlsWatchers opens `watchers` watches of `path` (a `?watch=true` URL path) on the server at `url`. */
export async function openTlsWatchers(options: { url: string; path: string; token: string; ca: Buffer; watchers: number }): Promise<TlsWatchers> {
  const worker = new Worker(WORKER, { eval: true, workerData: { ...options, ca: options.ca.toString() } });
  const first = await new Promise<{ open: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    open: first.open,
    async stop() {
      const done = new Promise<{ lat: Float64Array }>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const { lat } = await done;
      await worker.terminate();
      return lat;
    },
  };
}
