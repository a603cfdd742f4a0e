import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ExportChange, ExportLog } from '../storage/index.js';
import { createEventMetrics } from './event-metrics.js';
import { followLog } from './log-follower.js';

/** FakeLog is an export log in memory that can fail its next reads. */
class FakeLog {
  changes: ExportChange[] = [];
  failures = 0;
  append(count: number): void {
    const id = this.changes.length + 1;
    this.changes.push({
      id,
      observedMicros: 0,
      occurrence: {
        metadata: { name: `e.${id}`, namespace: 'prod' },
        event: { name: 'e', namespace: 'prod' },
        observedTime: '2025-01-01T00:00:00.000000Z',
        lastSeen: '2025-01-01T00:00:00.000000Z',
        countBefore: 0,
        countAfter: count,
        reason: 'BackOff',
        regarding: { kind: 'Pod', namespace: 'prod', name: 'web-1' },
      },
    });
  }
  head(): Promise<number> {
    return Promise.resolve(this.changes.length);
  }
  read(after: number, limit: number): Promise<ExportChange[]> {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(new Error('database is locked'));
    }
    return Promise.resolve(this.changes.filter((c) => c.id > after).slice(0, limit));
  }
}

async function until(what: string, fn: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

void describe('followLog', () => {
  void it('counts what the log gets after its head at the start, none of what it held, through failed reads', async () => {
    const log = new FakeLog();
    log.append(50);
    log.append(7);
    const metrics = createEventMetrics({ labels: ['reason'] });
    const total = (): number => metrics.collectables[0]!.get().values.reduce((s, v) => s + v.value, 0);
    const follower = followLog(log as unknown as ExportLog, metrics, { pollIntervalMs: 5 });
    await follower.started;
    log.failures = 2;
    log.append(3);
    log.append(4);
    await until('the new changes are counted', () => total() === 7);
    await follower.stop();
    assert.equal(total(), 7, 'the 57 occurrences archived before the start are not counted');
  });
});
