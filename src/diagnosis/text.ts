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

/**
 * said is a value from the events inside a sentence: on one line and in double
 * quotes, so where it ends is plain. A caller quotes only a value that is
 * `present`: an empty one is left out of the sentence (`named`), never `""`.
 */
export function said(v: string | undefined): string {
  return `"${oneLine(v ?? '')}"`;
}

/** present says whether a fact has a value to repeat: defined and not blank (an older kubelet leaves some out, a stranger's event may carry `""`). */
export function present(v: string | undefined): v is string {
  return v !== undefined && oneLine(v) !== '';
}

/** article is `a` or `an` before a noun, by its first letter. */
function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a';
}

/**
 * named is a noun with the value that names it (`pod "web-1"`), or the noun
 * alone with its article (`a pod`) when the events leave the value empty.
 */
export function named(noun: string, v: string | undefined): string {
  return present(v) ? `${noun} ${said(v)}` : `${article(noun)} ${noun}`;
}

/** capital starts a sentence with a capital letter (`a pod …` → `A pod …`). */
export function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** theObject names an event's object at the start of a sentence: `Pod "web-1"`, `A ReplicaSet`, `Object "x"`. */
export function theObject(f: Facts): string {
  return capital(named(present(f.objectKind) ? oneLine(f.objectKind) : 'object', f.objectName));
}

/** thePod names the event's pod at the start of a sentence: `Pod "web-1"`, or `A pod`. */
export function thePod(f: Facts): string {
  return capital(named('pod', f.objectName));
}

/** containerOf names a pod's container at the start of a sentence: `Container "app" of pod "web-1"`, `A container of pod "web-1"`. */
export function containerOf(f: Facts): string {
  return capital(`${named('container', f.container)} of ${named('pod', f.objectName)}`);
}

/** inNamespace is ` in namespace "shop"`, or nothing when the events name none. */
export function inNamespace(f: Facts): string {
  return present(f.namespace) ? ` in namespace ${said(f.namespace)}` : '';
}

/** theNode is `the node "node-a"`, or `a node` when the events name none. */
export function theNode(f: Facts): string {
  return present(f.node) ? `the node ${said(f.node)}` : 'a node';
}

/** podWords are a kubectl command's `<pod> -n <namespace>` for the event's pod. */
export function podWords(f: Facts): StepWord[] {
  return [{ value: f.objectKind === 'Pod' ? f.objectName : f.pod, role: 'pod' }, '-n', { value: f.namespace, role: 'namespace' }];
}

/** containerWords are `<flag> <container>` (or `<flag><container>` for a `--x=` flag) when the events name the container, else nothing: the command then means the pod's default container. */
export function containerWords(f: Facts, flag: '-c' | '--container=' | '--target='): StepWord[] {
  if (!present(f.container)) return [];
  return flag === '-c' ? ['-c', { value: f.container, role: 'container' }] : [{ value: f.container, role: 'container', prefix: flag }];
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
