import type { Clock, Logger } from '../../internal/index.js';
import type { EtcdKV } from './options.js';

/**
 * COMPACT_REV_KEY is the key through which kube-apiservers sharing an etcd
 * agree on compactions: its value is the last compacted revision and its
 * version a counter that a compare-and-swap advances, so that of several
 * replicas only one compacts each step. The name is upstream's, outside any
 * prefix, because an etcd compaction is cluster-wide.
 */
export const COMPACT_REV_KEY = 'compact_rev_key';
const KEY = Buffer.from(COMPACT_REV_KEY);

interface Checkpoint {
  at: number;
  rv: number;
}

/**
 * Compactor trims etcd history older than the window. Each tick notes the
 * newest revision the store has seen with the time; a revision noted at least
 * a window ago is then compacted, so every change younger than the window
 * stays replayable (the window is a floor: history may be kept longer).
 */
export class Compactor {
  private checkpoints: Checkpoint[] = [];
  private compacted = 0;
  private running: Promise<void> | undefined;
  private refreshing = false;

  constructor(
    private readonly kv: () => Promise<EtcdKV>,
    private readonly o: { clock: Clock; logger: Logger; windowMs: number; knownRv: () => number; observe: (revision: string) => void },
  ) {}

  /** tick runs on the store's compaction timer. */
  tick(): void {
    const now = this.o.clock.now();
    this.checkpoints.push({ at: now, rv: this.o.knownRv() });
    this.refresh();
    let due: Checkpoint | undefined;
    while (this.checkpoints.length > 0 && this.checkpoints[0]!.at <= now - this.o.windowMs) due = this.checkpoints.shift();
    if (due === undefined || due.rv <= this.compacted || this.running !== undefined) {
      if (due !== undefined && this.running !== undefined) this.checkpoints.unshift(due);
      return;
    }
    this.running = this.compactTo(due.rv)
      .catch((e: unknown) => this.o.logger.warn('etcd compaction failed', { revision: due.rv, error: e }))
      .finally(() => (this.running = undefined));
  }

  /** oldest is the oldest revision still replayable, read from etcd after any compaction this store has started. */
  async oldest(): Promise<number> {
    await this.running;
    const r = await (await this.kv()).range({ key: KEY });
    this.o.observe(r.header.revision);
    this.note(r.kvs[0]?.value);
    return this.compacted;
  }

  /** known is the newest compaction this store has heard of, without asking etcd. */
  known(): number {
    return this.compacted;
  }

  /** refresh reads the shared compaction point and, through the response header, the current revision: an idle store stays current. */
  private refresh(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    void this.oldest()
      .catch(() => undefined)
      .finally(() => (this.refreshing = false));
  }

  private note(value: Buffer | undefined): void {
    const rv = value === undefined ? 0 : Number(value.toString());
    if (Number.isFinite(rv) && rv > this.compacted) this.compacted = rv;
  }

  private async compactTo(rv: number): Promise<void> {
    const kv = await this.kv();
    const cur = await kv.range({ key: KEY });
    const stored = cur.kvs[0];
    this.note(stored?.value);
    if (rv <= this.compacted) return;
    const swapped = await kv.txn({
      compare: [{ key: KEY, target: 'Version', result: 'Equal', version: stored === undefined ? 0 : Number(stored.version) }],
      success: [{ request_put: { key: KEY, value: Buffer.from(String(rv)) } }],
      failure: [],
    });
    this.o.observe(swapped.header.revision);
    // Another replica moved the key first: it compacts this step, and the next tick reads its revision.
    if (!swapped.succeeded) return;
    try {
      await kv.compact({ revision: rv });
    } catch (e) {
      // Compacted already (by etcd's own auto-compaction, say): history up to rv is gone either way.
      if (!/compacted/.test(e instanceof Error ? e.message : String(e))) throw e;
    }
    this.compacted = Math.max(this.compacted, rv);
  }
}
