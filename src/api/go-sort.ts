/**
 * Go's sort.Sort (pattern-defeating quicksort), reproduced step for step so that
 * events with equal times come out in the same order as in kubectl. It is not
 * stable: for more than 12 elements equal keys may be reordered.
 */

/**
 * goSort sorts `data` in place exactly as Go's sort.Sort would with the given
 * Less, including the final order of elements that compare equal.
 */
export function goSort<T>(data: T[], less: (a: T, b: T) => boolean): void {
  const n = data.length;
  if (n <= 1) return;
  const s = new GoSorter(data, less);
  s.pdqsort(0, n, bitsLen(n));
}

function bitsLen(x: number): number {
  return x === 0 ? 0 : 32 - Math.clz32(x);
}

const MASK64 = (1n << 64n) - 1n;

class GoSorter<T> {
  constructor(
    private readonly data: T[],
    private readonly lessFn: (a: T, b: T) => boolean,
  ) {}

  less(i: number, j: number): boolean {
    return this.lessFn(this.data[i]!, this.data[j]!);
  }

  swap(i: number, j: number): void {
    const t = this.data[i]!;
    this.data[i] = this.data[j]!;
    this.data[j] = t;
  }

  insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) {
      for (let j = i; j > a && this.less(j, j - 1); j--) this.swap(j, j - 1);
    }
  }

  siftDown(lo: number, hi: number, first: number): void {
    let root = lo;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && this.less(first + child, first + child + 1)) child++;
      if (!this.less(first + root, first + child)) return;
      this.swap(first + root, first + child);
      root = child;
    }
  }

  heapSort(a: number, b: number): void {
    const first = a;
    const hi = b - a;
    for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) this.siftDown(i, hi, first);
    for (let i = hi - 1; i >= 0; i--) {
      this.swap(first, first + i);
      this.siftDown(0, i, first);
    }
  }

  pdqsort(a: number, b: number, limit: number): void {
    const maxInsertion = 12;
    let wasBalanced = true;
    let wasPartitioned = true;
    for (;;) {
      const length = b - a;
      if (length <= maxInsertion) {
        this.insertionSort(a, b);
        return;
      }
      if (limit === 0) {
        this.heapSort(a, b);
        return;
      }
      if (!wasBalanced) {
        this.breakPatterns(a, b);
        limit--;
      }
      let [pivot, hint] = this.choosePivot(a, b);
      if (hint === 'decreasing') {
        this.reverseRange(a, b);
        pivot = b - 1 - (pivot - a);
        hint = 'increasing';
      }
      if (wasBalanced && wasPartitioned && hint === 'increasing' && this.partialInsertionSort(a, b)) return;
      if (a > 0 && !this.less(a - 1, pivot)) {
        a = this.partitionEqual(a, b, pivot);
        continue;
      }
      const [mid, alreadyPartitioned] = this.partition(a, b, pivot);
      wasPartitioned = alreadyPartitioned;
      const leftLen = mid - a;
      const rightLen = b - mid;
      const balanceThreshold = Math.trunc(length / 8);
      if (leftLen < rightLen) {
        wasBalanced = leftLen >= balanceThreshold;
        this.pdqsort(a, mid, limit);
        a = mid + 1;
      } else {
        wasBalanced = rightLen >= balanceThreshold;
        this.pdqsort(mid + 1, b, limit);
        b = mid;
      }
    }
  }

  partition(a: number, b: number, pivot: number): [number, boolean] {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    while (i <= j && this.less(i, a)) i++;
    while (i <= j && !this.less(j, a)) j--;
    if (i > j) {
      this.swap(j, a);
      return [j, true];
    }
    this.swap(i, j);
    i++;
    j--;
    for (;;) {
      while (i <= j && this.less(i, a)) i++;
      while (i <= j && !this.less(j, a)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    this.swap(j, a);
    return [j, false];
  }

  partitionEqual(a: number, b: number, pivot: number): number {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    for (;;) {
      while (i <= j && !this.less(a, i)) i++;
      while (i <= j && this.less(a, j)) j--;
      if (i > j) break;
      this.swap(i, j);
      i++;
      j--;
    }
    return i;
  }

  partialInsertionSort(a: number, b: number): boolean {
    const maxSteps = 5;
    const shortestShifting = 50;
    let i = a + 1;
    for (let step = 0; step < maxSteps; step++) {
      while (i < b && !this.less(i, i - 1)) i++;
      if (i === b) return true;
      if (b - a < shortestShifting) return false;
      this.swap(i, i - 1);
      // Go shifts down to index 1, not to a+1; kept for identical results.
      if (i - a >= 2) {
        for (let j = i - 1; j >= 1; j--) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
      if (b - i >= 2) {
        for (let j = i + 1; j < b; j++) {
          if (!this.less(j, j - 1)) break;
          this.swap(j, j - 1);
        }
      }
    }
    return false;
  }

  breakPatterns(a: number, b: number): void {
    const length = b - a;
    if (length < 8) return;
    let random = BigInt(length);
    const modulus = BigInt(2 ** bitsLen(length));
    const start = a + Math.trunc(length / 4) * 2 - 1;
    for (let idx = start; idx <= start + 2; idx++) {
      random ^= (random << 13n) & MASK64;
      random ^= random >> 7n;
      random ^= (random << 17n) & MASK64;
      let other = Number(random & (modulus - 1n));
      if (other >= length) other -= length;
      this.swap(idx, a + other);
    }
  }

  choosePivot(a: number, b: number): [number, 'unknown' | 'increasing' | 'decreasing'] {
    const shortestNinther = 50;
    const maxSwaps = 4 * 3;
    const l = b - a;
    const swaps = { n: 0 };
    let i = a + Math.trunc(l / 4) * 1;
    let j = a + Math.trunc(l / 4) * 2;
    let k = a + Math.trunc(l / 4) * 3;
    if (l >= 8) {
      if (l >= shortestNinther) {
        i = this.median(i - 1, i, i + 1, swaps);
        j = this.median(j - 1, j, j + 1, swaps);
        k = this.median(k - 1, k, k + 1, swaps);
      }
      j = this.median(i, j, k, swaps);
    }
    if (swaps.n === 0) return [j, 'increasing'];
    if (swaps.n === maxSwaps) return [j, 'decreasing'];
    return [j, 'unknown'];
  }

  order2(a: number, b: number, swaps: { n: number }): [number, number] {
    if (this.less(b, a)) {
      swaps.n++;
      return [b, a];
    }
    return [a, b];
  }

  median(a: number, b: number, c: number, swaps: { n: number }): number {
    [a, b] = this.order2(a, b, swaps);
    [b, c] = this.order2(b, c, swaps);
    [a, b] = this.order2(a, b, swaps);
    return b;
  }

  reverseRange(a: number, b: number): void {
    for (let i = a, j = b - 1; i < j; i++, j--) this.swap(i, j);
  }
}
