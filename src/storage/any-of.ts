import type { AnyOf } from './event-store.js';

/** asciiLower lowers the ASCII letters only, as SQLite's `lower()` and PostgreSQL's under the "C" collation do. */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** matchesAnyOf tells whether a type, reason and involved kind are kept by an AnyOf (see AnyOf). */
export function matchesAnyOf(anyOf: AnyOf, type: string, reason: string, kind: string): boolean {
  if (anyOf.types !== undefined && anyOf.types.length > 0) {
    const t = asciiLower(type);
    if (anyOf.types.some((want) => asciiLower(want) === t)) return true;
  }
  return (anyOf.reasons?.includes(reason) ?? false) || (anyOf.kinds?.includes(kind) ?? false);
}
