import type Database from 'better-sqlite3';

/**
 * perConnection makes the accessor of a state kept once per connection (what
 * `make` builds when a connection first asks), dropped with the connection:
 * each connection sees the file at its own time, so what it caches is its own.
 */
export function perConnection<T>(make: (db: Database.Database) => T): (db: Database.Database) => T {
  const byConnection = new WeakMap<Database.Database, T>();
  return (db) => {
    let state = byConnection.get(db);
    if (state === undefined) {
      state = make(db);
      byConnection.set(db, state);
    }
    return state;
  };
}
