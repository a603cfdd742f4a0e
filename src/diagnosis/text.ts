import { escapeTerminalLine } from '../api/index.js';
import type { Facts, StepWord } from './kind.js';

/** SAID_MAX_CHARS bounds a value repeated in a sentence: a cause is one line, not a copy of a long message. */
const SAID_MAX_CHARS = 200;

/**
 * oneLine is event text as a sentence may repeat it: runs of spaces, tabs and
 * newlines as one space, every other control shown rather than obeyed, cut at
 * SAID_MAX_CHARS.
 */
export function oneLine(v: string): string {
  const flat = escapeTerminalLine(v.replace(/[ \t\r\n]+/g, ' ').trim());
  const chars = [...flat];
  return chars.length > SAID_MAX_CHARS ? `${chars.slice(0, SAID_MAX_CHARS).join('')}…` : flat;
}

/** said is a value from the events inside a sentence: on one line and in double quotes, so where it ends is plain. */
export function said(v: string | undefined): string {
  return `"${oneLine(v ?? '')}"`;
}

/** theObject names an event's object in a sentence: `Pod "web-1"`. */
export function theObject(f: Facts): string {
  return `${oneLine(f.objectKind ?? '')} ${said(f.objectName)}`;
}

/** podWords are a kubectl command's `<pod> -n <namespace>` for the event's pod. */
export function podWords(f: Facts): StepWord[] {
  return [{ value: f.objectKind === 'Pod' ? f.objectName : f.pod, role: 'pod' }, '-n', { value: f.namespace, role: 'namespace' }];
}

/** objectWords are `<kind>/<name> -n <namespace>` for the event's own object. */
export function objectWords(f: Facts): StepWord[] {
  return [{ value: f.objectKind, role: 'kind' }, { value: f.objectName, role: 'name' }, '-n', { value: f.namespace, role: 'namespace' }];
}

/** firstGroup returns a regular expression's first group in `s`, trimmed, or undefined. */
export function firstGroup(re: RegExp, s: string): string | undefined {
  const m = re.exec(s);
  const g = m?.[1]?.trim();
  return g === undefined || g === '' ? undefined : g;
}

/** defined keeps the entries of a facts record that have a value. */
export function defined(r: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) if (v !== undefined) out[k] = v;
  return out;
}
