/**
 * JSON as kubectl prints it: Go's json.MarshalIndent with four spaces, `<`, `>`,
 * `&`, U+2028 and U+2029 escaped. Typed objects (what `kubectl events -o json`
 * prints) keep the wire order; unstructured ones (`kubectl get -o json`) have
 * every map's keys sorted, as Go's encoder sorts map keys.
 */

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/** sortKeysDeep returns a copy of a JSON value with every object's keys in byte order. */
export function sortKeysDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o).sort(compareBytes)) out[k] = sortKeysDeep(o[k]);
    return out;
  }
  return v;
}

/** compareBytes orders strings by their UTF-8 bytes, as Go sorts map keys. */
export function compareBytes(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** goJsonIndent prints a value as Go's json.MarshalIndent(v, "", "    ") plus the newline kubectl adds. */
export function goJsonIndent(v: unknown): string {
  return `${JSON.stringify(v, null, 4).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c]!)}\n`;
}
