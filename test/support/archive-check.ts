import assert from 'node:assert/strict';
import { eventLastSeen, occurrenceChange } from '../../src/api/index.js';
import type { CoreEvent } from '../../src/api/index.js';
import { request } from './http.js';

const OCCURRENCES = '/apis/archive.kevents.io/v1alpha1/occurrences';

/** allOccurrences reads every occurrence a kevents server holds, page by page. */
export async function allOccurrences(base: string): Promise<any[]> {
  const items: any[] = [];
  let cont = '';
  do {
    const r = await request(base, 'GET', `${OCCURRENCES}?limit=500${cont === '' ? '' : `&continue=${cont}`}`);
    assert.equal(r.status, 200, r.text);
    items.push(...r.json.items);
    cont = r.json.metadata.continue ?? '';
  } while (cont !== '');
  return items;
}

function change(countBefore: number, countAfter: number, lastSeen: string | null | undefined, message: string | undefined): string {
  return `${countBefore}->${countAfter} last=${lastSeen ?? null} msg=${message ?? ''}`;
}

/** histories groups occurrences by event uid: the sequence of observed changes of each event. */
export function histories(items: any[]): Map<string, string[]> {
  const byUid = new Map<string, string[]>();
  for (const o of items) {
    const list = byUid.get(o.event.uid) ?? [];
    list.push(change(o.countBefore, o.countAfter, o.lastSeen, o.message));
    byUid.set(o.event.uid, list);
  }
  return byUid;
}

/**
 * expectedHistories are the changes a lossless mirror archives from the versions a source
 * served (ADDED and MODIFIED objects in resourceVersion order): one per version that is an
 * observed change of its event, in the same form as `histories`.
 */
export function expectedHistories(versions: CoreEvent[]): Map<string, string[]> {
  const last = new Map<string, CoreEvent>();
  const byUid = new Map<string, string[]>();
  for (const v of versions) {
    const uid = v.metadata.uid ?? '';
    const c = occurrenceChange(last.get(uid), v);
    last.set(uid, v);
    if (c === undefined) continue;
    const list = byUid.get(uid) ?? [];
    list.push(change(c.countBefore, c.countAfter, eventLastSeen(v), v.message));
    byUid.set(uid, list);
  }
  return byUid;
}

/** historyDiffs describes the first events whose archived changes differ from the expected ones, for a failure message. */
export function historyDiffs(want: Map<string, string[]>, have: Map<string, string[]>, max = 3): string {
  const differ = [...want]
    .filter(([uid, c]) => JSON.stringify(have.get(uid)) !== JSON.stringify(c))
    .slice(0, max)
    .map(([uid, c]) => {
      const got = have.get(uid) ?? [];
      let i = 0;
      while (i < c.length && c[i] === got[i]) i++;
      return { uid, firstDifference: i, want: c.slice(i, i + 2), have: got.slice(i, i + 2), wantTotal: c.length, haveTotal: got.length };
    });
  const unexpected = [...have.keys()].filter((uid) => !want.has(uid)).slice(0, max);
  return JSON.stringify({ differ, unexpected });
}
