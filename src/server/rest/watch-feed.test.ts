import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent } from '../../api/index.js';
import { MemoryEventStore } from '../../storage/memory/index.js';
import { SharedChange, StoreFanout } from './watch-feed.js';
import type { FeedMember } from './watch-feed.js';

function event(namespace: string, name: string): CoreEvent {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace },
    involvedObject: { kind: 'Pod', name: 'p', namespace },
    reason: 'R',
    message: name,
    type: 'Normal',
  };
}

/** Recorder is a member that keeps the revisions it is offered past its start, as an HTTP watcher does. */
class Recorder implements FeedMember {
  readonly rvs: number[] = [];
  ended: { error?: unknown } | undefined;

  constructor(
    readonly namespace: string | undefined,
    private cursor: number,
  ) {}

  offer(c: SharedChange): void {
    if (c.rv <= this.cursor) return;
    this.cursor = c.rv;
    this.rvs.push(c.rv);
  }

  end(error?: unknown): void {
    this.ended = { error };
  }
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('StoreFanout', () => {
  it('gives every watcher each change after its start once and in order, whether it starts live or behind', async () => {
    const store = new MemoryEventStore();
    const fanout = new StoreFanout(store);
    const written: { rv: number; namespace: string }[] = [];
    const write = async (namespace: string, name: string): Promise<void> => {
      const e = await store.create(event(namespace, name));
      written.push({ rv: Number(e.metadata.resourceVersion), namespace });
    };
    for (let i = 0; i < 40; i++) await write(i % 2 === 0 ? 'a' : 'b', `before-${i}`);
    const members: Recorder[] = [];
    const joins: Promise<void>[] = [];
    const join = (namespace: string | undefined, start: number): void => {
      const m = new Recorder(namespace, start);
      members.push(m);
      joins.push(fanout.join(m, start));
    };
    const current = written[written.length - 1]!.rv;
    join('a', current);
    join('a', 1);
    join('a', 1);
    join('b', 10);
    join(undefined, 5);
    for (let i = 0; i < 40; i++) {
      await write(i % 3 === 0 ? 'a' : 'b', `during-${i}`);
      if (i === 10) join('a', written[20]!.rv);
      if (i === 20) join(undefined, written[written.length - 1]!.rv);
      if (i % 5 === 0) await turn();
    }
    await Promise.all(joins);
    for (let i = 0; i < 20 && members.some((m) => m.rvs[m.rvs.length - 1] !== lastOf(m)); i++) await turn();

    function lastOf(m: Recorder): number | undefined {
      const mine = written.filter((w) => m.namespace === undefined || w.namespace === m.namespace);
      return mine[mine.length - 1]?.rv;
    }
    const starts = [current, 1, 1, 10, 5, written[20]!.rv];
    for (const [i, m] of members.entries()) {
      const start = i < starts.length ? starts[i]! : undefined;
      const expected = written
        .filter((w) => (m.namespace === undefined || w.namespace === m.namespace) && (start === undefined || w.rv > start))
        .map((w) => w.rv);
      if (start === undefined) {
        // The last watcher started live at a revision only known once written: compare from its first change.
        assert.deepEqual(m.rvs, expected.slice(expected.indexOf(m.rvs[0]!)));
      } else {
        assert.deepEqual(m.rvs, expected, `watcher ${i} (${m.namespace ?? 'all'} from ${start})`);
      }
      fanout.leave(m);
    }
    await store.close();
  });

  it('ends its watchers without an error when the store closes', async () => {
    const store = new MemoryEventStore();
    const fanout = new StoreFanout(store);
    const live = new Recorder(undefined, 0);
    await fanout.join(live, await store.currentResourceVersion());
    await store.create(event('a', 'x'));
    await store.close();
    for (let i = 0; i < 10 && live.ended === undefined; i++) await turn();
    assert.deepEqual(live.ended, { error: undefined });
    assert.equal(live.rvs.length, 1);
  });
});

describe('SharedChange', () => {
  it('encodes a frame once per encoding and shares it', () => {
    const object = { ...event('a', 'x'), metadata: { name: 'x', namespace: 'a', resourceVersion: '7' } };
    const c = new SharedChange({ type: 'ADDED', object });
    let renders = 0;
    const render = (e: CoreEvent): string => {
      renders++;
      return JSON.stringify(e.metadata);
    };
    const first = c.frame('v1', 'ADDED', object, render);
    assert.equal(c.frame('v1', 'ADDED', object, render), first);
    assert.equal(renders, 1);
    assert.notEqual(c.frame('events.k8s.io/v1', 'ADDED', object, render), first);
    assert.equal(first.toString(), `{"type":"ADDED","object":${JSON.stringify(object.metadata)}}\n`);
    assert.equal(c.rv, 7);
  });
});
