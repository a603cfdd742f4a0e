/** LruCacheOptions configure an LruCache. */
export interface LruCacheOptions<K, V> {
  /** maxEntries bounds the cache; the least recently used entry goes first. */
  maxEntries: number;
  /** onEvict is told about entries pushed out by the bound (not about `delete`). */
  onEvict?: (key: K, value: V) => void;
}

/**
 * LruCache is a map bounded to `maxEntries`, evicting the least recently used
 * entry. `get` and `set` count as use; `peek` and `has` do not.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  readonly maxEntries: number;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;
  /** newest is the most recently used key while known, so repeated use of one key skips reordering the map. */
  private newest: K | undefined;
  private hasNewest = false;

  constructor(options: LruCacheOptions<K, V>) {
    if (!(options.maxEntries >= 1)) throw new RangeError(`LruCache: maxEntries must be at least 1, got ${options.maxEntries}`);
    this.maxEntries = options.maxEntries;
    this.onEvict = options.onEvict;
  }

  get size(): number {
    return this.map.size;
  }

  /** get returns the value and marks it most recently used. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    if (this.hasNewest && this.newest === key) return v;
    this.map.delete(key);
    this.map.set(key, v);
    this.newest = key;
    this.hasNewest = true;
    return v;
  }

  /** peek returns the value without changing the eviction order. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** set stores the value as most recently used, evicting the oldest entry when over the bound. */
  set(key: K, value: V): void {
    if (this.hasNewest && this.newest === key) {
      // Map.set on an existing key keeps its place, which is already the newest.
      this.map.set(key, value);
      return;
    }
    this.map.delete(key);
    this.map.set(key, value);
    this.newest = key;
    this.hasNewest = true;
    while (this.map.size > this.maxEntries) {
      const oldest = this.map.entries().next().value as [K, V];
      this.map.delete(oldest[0]);
      this.onEvict?.(oldest[0], oldest[1]);
    }
  }

  delete(key: K): boolean {
    if (this.hasNewest && this.newest === key) this.forgetNewest();
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.forgetNewest();
  }

  private forgetNewest(): void {
    this.newest = undefined;
    this.hasNewest = false;
  }

  /** entries lists the entries from least to most recently used. */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  /** keys lists the keys from least to most recently used. */
  keys(): IterableIterator<K> {
    return this.map.keys();
  }
}
