/** SendResult is what a load step needs of an answer. */
export interface SendResult {
  status: number;
  text: string;
  json?: any;
}

/** Send sends one request to the source (kevents serve by URL, or kube-apiserver with a token). */
export type Send = (method: string, path: string, body: unknown, contentType?: string) => Promise<SendResult>;

/** Acknowledged is a write the source answered 2xx: the event and the version the write made. */
export interface Acknowledged {
  uid: string;
  resourceVersion: string;
}

function micro(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

function second(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * EventLoad writes a mix of changes to one namespace of a source through both APIs: creates,
 * core/v1 count bumps, events.k8s.io/v1 series bumps, new messages and metadata-only writes.
 * Every 2xx answer is kept in `acknowledged`.
 */
export class EventLoad {
  private n = 0;
  private readonly core: { name: string; count: number }[] = [];
  private readonly v1: { name: string; count: number }[] = [];
  private running = true;
  writes = 0;
  readonly acknowledged: Acknowledged[] = [];
  private readonly corePath: string;
  private readonly v1Path: string;

  constructor(
    private readonly send: Send,
    readonly namespace = 'load',
  ) {
    this.corePath = `/api/v1/namespaces/${namespace}/events`;
    this.v1Path = `/apis/events.k8s.io/v1/namespaces/${namespace}/events`;
  }

  /** run writes with `workers` concurrent writers until `stop`. */
  async run(workers: number): Promise<void> {
    this.running = true;
    await Promise.all(Array.from({ length: workers }, () => this.worker()));
  }

  stop(): void {
    this.running = false;
  }

  /** recentCore are core/v1 events written lately, still alive at the source. */
  recentCore(n: number): { name: string; count: number }[] {
    return this.core.slice(-n);
  }

  private async worker(): Promise<void> {
    while (this.running) {
      await this.step();
      this.writes++;
      await sleep(5);
    }
  }

  private pick<T>(list: T[]): T | undefined {
    // Recent events only: older ones may have expired at the source.
    const recent = list.slice(-20);
    return recent[Math.floor(Math.random() * recent.length)];
  }

  /** step writes one change; `r` picks which (below 0.25 a core/v1 create, below 0.4 an events.k8s.io/v1 create). */
  async step(r = Math.random()): Promise<void> {
    const now = Date.now();
    const ns = this.namespace;
    if (r < 0.25 || this.core.length === 0) {
      const name = `core-${this.n++}`;
      this.core.push({ name, count: 1 });
      await this.create(this.corePath, {
        metadata: { name },
        involvedObject: { kind: 'Pod', namespace: ns, name: `web-${this.n % 7}`, apiVersion: 'v1' },
        reason: 'BackOff',
        message: 'Back-off restarting failed container',
        type: 'Warning',
        source: { component: 'kubelet', host: 'node-1' },
        count: 1,
        firstTimestamp: second(now),
        lastTimestamp: second(now),
      });
    } else if (r < 0.4 || this.v1.length === 0) {
      const name = `v1-${this.n++}`;
      this.v1.push({ name, count: 1 });
      await this.create(this.v1Path, {
        metadata: { name },
        eventTime: micro(now),
        reportingController: 'kevents.io/load',
        reportingInstance: 'load-1',
        action: 'Scheduling',
        reason: 'FailedScheduling',
        regarding: { kind: 'Pod', namespace: ns, name: `api-${this.n % 5}`, apiVersion: 'v1' },
        note: '0/3 nodes are available: 3 Insufficient cpu.',
        type: 'Warning',
      });
    } else if (r < 0.7) {
      const e = this.pick(this.core)!;
      e.count++;
      await this.patch(`${this.corePath}/${e.name}`, { count: e.count, lastTimestamp: second(now) });
    } else if (r < 0.88) {
      const e = this.pick(this.v1)!;
      e.count++;
      await this.patch(`${this.v1Path}/${e.name}`, { series: { count: e.count, lastObservedTime: micro(now) } });
    } else if (r < 0.94) {
      const e = this.pick(this.core)!;
      await this.patch(`${this.corePath}/${e.name}`, { message: `Back-off restarting failed container (attempt ${this.n++})` });
    } else {
      const e = this.pick(this.core)!;
      await this.patch(`${this.corePath}/${e.name}`, { metadata: { labels: { touched: String(this.n++) } } });
    }
  }

  /** bumpCore raises the count of a core/v1 event once; the source must still have it. */
  async bumpCore(e: { name: string; count: number }): Promise<void> {
    e.count++;
    const r = await this.send('PATCH', `${this.corePath}/${e.name}`, { count: e.count, lastTimestamp: second(Date.now()) }, 'application/merge-patch+json');
    if (r.status !== 200) throw new Error(`PATCH ${e.name}: ${r.status} ${r.text}`);
    this.acknowledge(r);
  }

  private async patch(path: string, body: unknown): Promise<void> {
    const r = await this.send('PATCH', path, body, 'application/merge-patch+json');
    // An event that expired meanwhile is simply not changed; anything else is a broken source.
    if (r.status !== 200 && r.status !== 404) throw new Error(`PATCH ${path}: ${r.status} ${r.text}`);
    if (r.status === 200) this.acknowledge(r);
  }

  private async create(path: string, body: unknown): Promise<void> {
    const r = await this.send('POST', path, body, 'application/json');
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
    this.acknowledge(r);
  }

  private acknowledge(r: SendResult): void {
    const meta = (r.json ?? JSON.parse(r.text)).metadata as { uid: string; resourceVersion: string };
    this.acknowledged.push({ uid: meta.uid, resourceVersion: meta.resourceVersion });
  }
}
