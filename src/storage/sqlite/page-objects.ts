import { MAX_OBJECTS_AT_ONCE } from './list-query.js';

/**
 * PageObjects reads the objects of a listed page's versions as they are asked for (those a server
 * has kept rendered never are). A miss right after the rows the last read brought reads twice as
 * many rows as the last (up to MAX_OBJECTS_AT_ONCE) in one statement: a page read cold is read in a
 * few statements instead of one per item, and the odd miss of a warm page reads its row alone.
 */
export class PageObjects {
  private readonly got = new Map<number, Buffer>();
  private run = 0;
  private readTo = -1;

  constructor(
    private readonly rvs: readonly number[],
    private readonly read: (rvs: number[]) => { rv: number; object: Buffer }[],
  ) {}

  object(i: number): Buffer | undefined {
    const rv = this.rvs[i]!;
    const kept = this.got.get(rv);
    if (kept !== undefined) {
      this.got.delete(rv);
      return kept;
    }
    this.run = i === this.readTo ? Math.min(this.run * 2, MAX_OBJECTS_AT_ONCE) : 1;
    const want = this.rvs.slice(i, i + this.run);
    this.readTo = i + want.length;
    let found: Buffer | undefined;
    for (const r of this.read(want)) {
      if (r.rv === rv) found = r.object;
      else this.got.set(r.rv, r.object);
    }
    return found;
  }
}
