import http from 'node:http';
import { kubeletEvent, sleep } from './cli.js';

/** Writer POSTs creates to a kevents server at a steady rate over keep-alive connections. */
export class Writer {
  sent = 0;
  failed = 0;
  private stopped = false;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  constructor(
    private readonly base: string,
    private readonly offset: number,
    private readonly rate: number,
  ) {}
  private post(i: number): Promise<void> {
    const ev = kubeletEvent(this.offset + i, Date.now());
    const body = JSON.stringify(ev);
    const ns = (ev.metadata as { namespace: string }).namespace;
    return new Promise((resolve) => {
      const req = http.request(`${this.base}/api/v1/namespaces/${ns}/events`, { method: 'POST', agent: this.agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 201) this.sent++;
          else this.failed++;
          resolve();
        });
      });
      req.on('error', () => {
        this.failed++;
        resolve();
      });
      req.end(body);
    });
  }
  async run(seconds: number): Promise<void> {
    const t0 = Date.now();
    let i = 0;
    const inflight = new Set<Promise<void>>();
    while (!this.stopped && Date.now() - t0 < seconds * 1000) {
      const due = Math.floor(((Date.now() - t0) / 1000) * this.rate);
      while (i < due && inflight.size < 64) {
        const p: Promise<void> = this.post(i++).then(() => {
          inflight.delete(p);
        });
        inflight.add(p);
      }
      await sleep(5);
    }
    await Promise.all(inflight);
    this.agent.destroy();
  }
}
