/**
 * YAML as kubectl prints it (sigs.k8s.io/yaml over go-yaml v2): keys sorted,
 * sequences not indented under their key, strings that would read back as
 * another type double-quoted, strings a plain scalar cannot carry single-quoted,
 * and long scalars folded at the first space past column 80.
 */
import { compareBytes } from './go-json.js';

const BEST_WIDTH = 80;

const RESOLVE_MAP = new Set([
  'y', 'Y', 'yes', 'Yes', 'YES', 'n', 'N', 'no', 'No', 'NO', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE',
  'on', 'On', 'ON', 'off', 'Off', 'OFF', '~', 'null', 'Null', 'NULL', '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF',
  '+.inf', '+.Inf', '+.INF', '-.inf', '-.Inf', '-.INF', '<<',
]);
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}(?:(?:[Tt]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))|(?: \d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?))?$/;
const GO_INT = /^[-+]?(?:0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9][0-9]*|0)$/;

/** resolvesToNonString tells whether go-yaml would read a plain scalar back as something other than a string. */
function resolvesToNonString(s: string): boolean {
  if (s === '') return true;
  if (RESOLVE_MAP.has(s)) return true;
  const c = s[0]!;
  if (!/[-+.0-9]/.test(c)) return false;
  if (TIMESTAMP.test(s)) return true;
  const plain = s.replace(/_/g, '');
  if (GO_INT.test(plain)) return true;
  if (YAML_STYLE_FLOAT.test(plain)) return true;
  if (/^-?0b[01]+$/.test(plain)) return true;
  return BASE60_FLOAT.test(s);
}

function isPrintable(cp: number): boolean {
  return (
    cp === 0x0a ||
    (cp >= 0x20 && cp <= 0x7e) ||
    cp === 0x85 ||
    (cp >= 0xa0 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff) ||
    cp >= 0x10000
  );
}

interface Analysis {
  plain: boolean;
  single: boolean;
  /** block tells whether a literal block scalar can carry the string. */
  block: boolean;
}

/** analyze is libyaml's yaml_emitter_analyze_scalar for block context. */
function analyze(s: string): Analysis {
  if (s === '') return { plain: false, single: true, block: false };
  let blockIndicators = s.startsWith('---') || s.startsWith('...');
  let special = false;
  let lineBreaks = false;
  let leadingSpace = false;
  let leadingBreak = false;
  let trailingSpace = false;
  let trailingBreak = false;
  let breakSpace = false;
  let spaceBreak = false;
  let previousSpace = false;
  let previousBreak = false;
  const chars = [...s];
  chars.forEach((ch, i) => {
    const cp = ch.codePointAt(0)!;
    const next = chars[i + 1];
    const followedByBlank = next === undefined || next === ' ' || next === '\t' || next === '\n';
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      if ((ch === '?' || ch === ':') && followedByBlank) blockIndicators = true;
      if (ch === '-' && followedByBlank) blockIndicators = true;
    } else {
      if (ch === ':' && followedByBlank) blockIndicators = true;
      if (ch === '#' && (chars[i - 1] === ' ' || chars[i - 1] === '\n')) blockIndicators = true;
    }
    if (!isPrintable(cp) || cp === 0xfeff) special = true;
    if (ch === '\n') lineBreaks = true;
    if (ch === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === chars.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (ch === '\n') {
      if (i === 0) leadingBreak = true;
      if (i === chars.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousSpace = false;
      previousBreak = true;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
  });
  let plain = !blockIndicators;
  let single = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) plain = false;
  if (breakSpace) {
    plain = false;
    single = false;
  }
  if (spaceBreak || special) {
    plain = false;
    single = false;
  }
  if (lineBreaks) plain = false;
  return { plain, single, block: !(spaceBreak || special || trailingSpace) };
}

const DOUBLE_ESCAPES: Record<number, string> = {
  0x00: '0', 0x07: 'a', 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0b: 'v', 0x0c: 'f', 0x0d: 'r', 0x1b: 'e',
  0x22: '"', 0x5c: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P',
};

class Emitter {
  out = '';
  column = 0;

  write(s: string): void {
    this.out += s;
    for (const _ of s) this.column++;
  }

  newline(indent: number): void {
    this.out += `\n${' '.repeat(indent)}`;
    this.column = indent;
  }

  plain(s: string, indent: number): void {
    const chars = [...s];
    let spaces = false;
    chars.forEach((ch, i) => {
      if (ch === ' ') {
        if (!spaces && this.column > BEST_WIDTH && chars[i + 1] !== ' ') this.newline(indent);
        else this.write(ch);
        spaces = true;
      } else {
        this.write(ch);
        spaces = false;
      }
    });
  }

  single(s: string, indent: number): void {
    this.write("'");
    const chars = [...s];
    let spaces = false;
    chars.forEach((ch, i) => {
      if (ch === ' ') {
        if (!spaces && this.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1 && chars[i + 1] !== ' ') this.newline(indent);
        else this.write(ch);
        spaces = true;
      } else {
        this.write(ch === "'" ? "''" : ch);
        spaces = false;
      }
    });
    this.write("'");
  }

  double(s: string, indent: number): void {
    this.write('"');
    const chars = [...s];
    let spaces = false;
    chars.forEach((ch, i) => {
      const cp = ch.codePointAt(0)!;
      if (!isPrintable(cp) || cp === 0xfeff || ch === '"' || ch === '\\' || cp === 0x85 || cp === 0x2028 || cp === 0x2029 || ch === '\n') {
        const short = DOUBLE_ESCAPES[cp];
        if (short !== undefined) this.write(`\\${short}`);
        else if (cp <= 0xff) this.write(`\\x${cp.toString(16).toUpperCase().padStart(2, '0')}`);
        else if (cp <= 0xffff) this.write(`\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`);
        else this.write(`\\U${cp.toString(16).toUpperCase().padStart(8, '0')}`);
        spaces = false;
      } else if (ch === ' ') {
        if (!spaces && this.column > BEST_WIDTH && i !== 0 && i !== chars.length - 1) {
          this.newline(indent);
          if (chars[i + 1] === ' ') this.write('\\');
        } else {
          this.write(ch);
        }
        spaces = true;
      } else {
        this.write(ch);
        spaces = false;
      }
    });
    this.write('"');
  }

  literal(s: string, indent: number): void {
    const chomp = !s.endsWith('\n') ? '-' : s.endsWith('\n\n') || s === '\n' ? '+' : '';
    const hint = s.startsWith(' ') || s.startsWith('\n') ? '2' : '';
    this.write(`|${hint}${chomp}`);
    const body = chomp === '' ? s.slice(0, -1) : chomp === '+' ? s.slice(0, -1) : s;
    for (const line of body.split('\n')) {
      if (line === '') {
        this.out += '\n';
        this.column = 0;
      } else {
        this.newline(indent);
        this.write(line);
      }
    }
  }

  scalar(v: unknown, indent: number): void {
    if (v === null || v === undefined) return this.write('null');
    if (typeof v === 'boolean') return this.write(v ? 'true' : 'false');
    if (typeof v === 'number') return this.write(Number.isInteger(v) ? v.toFixed(0) : goFloat(v));
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    const a = analyze(s);
    // go-yaml asks for a literal block for any string with a line break; the emitter falls back to double quotes.
    if (s.includes('\n')) return a.block ? this.literal(s, indent) : this.double(s, indent);
    if (resolvesToNonString(s) || BASE60_FLOAT.test(s)) return this.double(s, indent);
    if (a.plain) return this.plain(s, indent);
    if (a.single) return this.single(s, indent);
    return this.double(s, indent);
  }
}

function goFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? '.nan' : n > 0 ? '+.inf' : '-.inf';
  const [mantissa = '', expText = '0'] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 21) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

function isEmptyCollection(v: unknown): string | undefined {
  if (Array.isArray(v) && v.length === 0) return '[]';
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) return '{}';
  return undefined;
}

function emitMap(e: Emitter, o: Record<string, unknown>, indent: number, first: boolean): void {
  const keys = Object.keys(o).sort(compareBytes);
  keys.forEach((k, i) => {
    if (!(first && i === 0)) e.newline(indent);
    e.scalar(k, indent + 2);
    e.write(':');
    emitValue(e, o[k], indent);
  });
}

function emitValue(e: Emitter, v: unknown, indent: number): void {
  const empty = isEmptyCollection(v);
  if (empty !== undefined) {
    e.write(` ${empty}`);
  } else if (Array.isArray(v)) {
    for (const item of v) {
      e.newline(indent);
      emitItem(e, item, indent);
    }
  } else if (v !== null && typeof v === 'object') {
    e.newline(indent + 2);
    emitMap(e, v as Record<string, unknown>, indent + 2, true);
  } else {
    e.write(' ');
    e.scalar(v, indent + 2);
  }
}

function emitItem(e: Emitter, v: unknown, indent: number): void {
  e.write('-');
  const empty = isEmptyCollection(v);
  if (empty !== undefined) {
    e.write(` ${empty}`);
  } else if (Array.isArray(v)) {
    v.forEach((item, i) => {
      if (i === 0) e.write(' ');
      else e.newline(indent + 2);
      emitItem(e, item, indent + 2);
    });
  } else if (v !== null && typeof v === 'object') {
    e.write(' ');
    emitMap(e, v as Record<string, unknown>, indent + 2, true);
  } else {
    e.write(' ');
    e.scalar(v, indent + 2);
  }
}

/** goYaml prints a JSON value as kubectl's `-o yaml` does, ending in a newline. */
export function goYaml(v: unknown): string {
  const e = new Emitter();
  const empty = isEmptyCollection(v);
  if (empty !== undefined) return `${empty}\n`;
  if (Array.isArray(v)) {
    v.forEach((item, i) => {
      if (i > 0) e.newline(0);
      emitItem(e, item, 0);
    });
  } else if (v !== null && typeof v === 'object') {
    emitMap(e, v as Record<string, unknown>, 0, true);
  } else {
    e.scalar(v, 0);
  }
  return `${e.out}\n`;
}
