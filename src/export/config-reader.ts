import type * as Yaml from 'yaml';
import { requireCjs } from '../internal/index.js';

/** ConfigIssue is one thing wrong with a config: where (file, line, column, field path) and what. */
export interface ConfigIssue {
  line: number;
  column: number;
  /** field is the path of the field, e.g. `sinks[1].url`. */
  field: string;
  message: string;
}

/** ConfigError is a config that cannot be used, with every issue found in it. */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: ConfigIssue[],
  ) {
    super(issues.map((i) => `${file}:${i.line}:${i.column}: ${i.field === '' ? '' : `${i.field}: `}${i.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** isConfigError tells a ConfigError by its shape. */
export function isConfigError(e: unknown): e is ConfigError {
  return e instanceof Error && e.name === 'ConfigError' && Array.isArray((e as Partial<ConfigError>).issues);
}

type Path = (string | number)[];

/**
 * ConfigReader reads a parsed YAML document field by field: each read names the
 * field's path, and each problem is recorded with the line and column of the
 * node it concerns, so one pass reports every mistake at once.
 */
export class ConfigReader {
  readonly issues: ConfigIssue[] = [];
  private readonly doc: Yaml.Document.Parsed;
  private readonly lines: Yaml.LineCounter;
  readonly root: unknown;

  constructor(text: string) {
    const yaml = requireCjs('yaml') as typeof Yaml;
    this.lines = new yaml.LineCounter();
    this.doc = yaml.parseDocument(text, { lineCounter: this.lines, uniqueKeys: true, prettyErrors: false });
    for (const e of this.doc.errors) {
      const pos = this.lines.linePos(e.pos[0]);
      this.issues.push({ line: pos.line, column: pos.col, field: '', message: e.message.split('\n')[0] ?? e.message });
    }
    this.root = this.doc.errors.length === 0 ? this.toJS() : undefined;
  }

  /**
   * toJS builds the value of a document that parsed: an alias to no anchor, or
   * more aliases than the parser allows (a YAML bomb), only fails here.
   */
  private toJS(): unknown {
    try {
      return this.doc.toJS() as unknown;
    } catch (e) {
      this.issues.push({ line: 1, column: 1, field: '', message: (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '' });
      return undefined;
    }
  }

  /** fail records an issue at a field (its value's node, else the nearest enclosing one). */
  fail(path: Path, message: string): void {
    const pos = this.position(path);
    this.issues.push({ ...pos, field: formatPath(path), message });
  }

  /** failKey records an issue at a key of a mapping (an unknown field is its key's fault, not its value's). */
  failKey(path: Path, key: string, message: string): void {
    const map = this.doc.getIn(path, true) as { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | undefined;
    const range = map?.items?.find((i) => i.key?.value === key)?.key?.range;
    if (range === undefined) return this.fail([...path, key], message);
    const p = this.lines.linePos(range[0]);
    this.issues.push({ line: p.line, column: p.col, field: formatPath([...path, key]), message });
  }

  private position(path: Path): { line: number; column: number } {
    for (let n = path.length; n >= 0; n--) {
      const node = this.doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node !== undefined && node !== null && typeof node === 'object' && Array.isArray(node.range)) {
        const p = this.lines.linePos(node.range[0]);
        return { line: p.line, column: p.col };
      }
    }
    return { line: 1, column: 1 };
  }

  /** object reads a mapping; undefined (with an issue when required or of the wrong type) otherwise. */
  object(path: Path, value: unknown, known: readonly string[], required = false): Record<string, unknown> | undefined {
    if (value === undefined || value === null) {
      if (required) this.fail(path, 'is required');
      return undefined;
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(path, `must be a mapping, not ${describe(value)}`);
      return undefined;
    }
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!known.includes(k)) this.failKey(path, k, `unknown field (known: ${known.join(', ')})`);
    return o;
  }

  list(path: Path, value: unknown, required = false): unknown[] {
    if (value === undefined || value === null) {
      if (required) this.fail(path, 'is required');
      return [];
    }
    if (!Array.isArray(value)) {
      this.fail(path, `must be a list, not ${describe(value)}`);
      return [];
    }
    return value;
  }

  string(path: Path, value: unknown, options: { required?: boolean; oneOf?: readonly string[]; pattern?: RegExp; hint?: string } = {}): string | undefined {
    if (value === undefined || value === null) {
      if (options.required === true) this.fail(path, 'is required');
      return undefined;
    }
    if (typeof value !== 'string') {
      this.fail(path, `must be a string, not ${describe(value)}`);
      return undefined;
    }
    if (options.oneOf !== undefined && !options.oneOf.includes(value)) {
      this.fail(path, `must be one of ${options.oneOf.join(', ')}, not ${JSON.stringify(value)}`);
      return undefined;
    }
    if (options.pattern !== undefined && !options.pattern.test(value)) {
      this.fail(path, `${JSON.stringify(value)} ${options.hint ?? `does not match ${String(options.pattern)}`}`);
      return undefined;
    }
    return value;
  }

  integer(path: Path, value: unknown, options: { min?: number; max?: number } = {}): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.fail(path, `must be an integer, not ${describe(value)}`);
      return undefined;
    }
    if (options.min !== undefined && value < options.min) {
      this.fail(path, `must be at least ${options.min}`);
      return undefined;
    }
    if (options.max !== undefined && value > options.max) {
      this.fail(path, `must be at most ${options.max}`);
      return undefined;
    }
    return value;
  }

  boolean(path: Path, value: unknown): boolean | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') {
      this.fail(path, `must be true or false, not ${describe(value)}`);
      return undefined;
    }
    return value;
  }

  /** duration reads `500ms`, `30s`, `5m`, `1h`, `1h30m` or `2d` (a bare 0 too) as milliseconds. */
  duration(path: Path, value: unknown): number | undefined {
    if (value === undefined || value === null) return undefined;
    const ms = typeof value === 'string' || value === 0 ? parseDuration(String(value)) : undefined;
    if (ms === undefined) this.fail(path, `must be a duration such as 500ms, 30s, 5m or 1h, not ${describe(value)}`);
    return ms;
  }

  /** regex reads a string as an anchored regular expression (the whole value must match). */
  regex(path: Path, value: unknown): RegExp | undefined {
    const s = this.string(path, value);
    if (s === undefined) return undefined;
    try {
      return new RegExp(`^(?:${s})$`);
    } catch (e) {
      this.fail(path, `is not a regular expression: ${(e as Error).message}`);
      return undefined;
    }
  }

  /** stringMap reads a mapping of strings to strings. */
  stringMap(path: Path, value: unknown): Record<string, string> | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(path, `must be a mapping of strings, not ${describe(value)}`);
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'string') out[k] = v;
      else this.fail([...path, k], `must be a string, not ${describe(v)}`);
    }
    return out;
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** parseDuration reads a duration in Go syntax (plus days) as milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let end = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(s)) !== null) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    end = re.lastIndex;
  }
  return s !== '' && end === s.length ? total : undefined;
}

function formatPath(path: Path): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}
