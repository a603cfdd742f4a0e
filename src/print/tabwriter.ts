/**
 * Elastic tabstops with the behaviour of Go's text/tabwriter (and of the
 * github.com/liggitt/tabwriter fork kubectl uses, which adds RememberWidths),
 * so that kevents prints tables byte for byte as kubectl does.
 *
 * Text is split into cells at '\t' and '\v'; lines end at '\n' or '\f'. A cell
 * belongs to a column only if it is tab-terminated: the text after the last tab
 * of a line is never padded. Adjacent lines with a cell in the same column form
 * a column block whose width is the widest cell plus padding (at least
 * minwidth). Widths count Unicode code points, as Go counts runes.
 * The Escape, FilterHTML and StripEscape features of Go's writer are not
 * reproduced: kubectl never uses them.
 */
import { escapeTerminal } from '../api/index.js';
import type { Table, TableColumnDefinition } from '../api/index.js';

/** TabWriterSettings are the parameters of Go's tabwriter.NewWriter, flags as booleans. */
export interface TabWriterSettings {
  /** minwidth is the minimal cell width, padding included. */
  minwidth: number;
  /** tabwidth is the width of a tab in spaces, used when padding with tabs. */
  tabwidth: number;
  /** padding is added to the widest cell of a column. */
  padding: number;
  /** padchar is the padding character; '\t' pads with tabs. */
  padchar: string;
  alignRight?: boolean;
  discardEmptyColumns?: boolean;
  tabIndent?: boolean;
  debug?: boolean;
  /** rememberWidths keeps column widths across flushes (liggitt/tabwriter). */
  rememberWidths?: boolean;
  /**
   * width counts the columns a cell takes (default: its code points, as Go counts
   * runes); a printer that styles cells counts them without its own SGR sequences.
   */
  width?: (cell: string) => number;
}

/**
 * KUBECTL_TABWRITER is cli-runtime's GetNewTabWriter: the writer of `kubectl get`
 * and `kubectl events` (minwidth 6, tabwidth 4, padding 3, RememberWidths).
 */
export const KUBECTL_TABWRITER: Readonly<TabWriterSettings> = Object.freeze({
  minwidth: 6,
  tabwidth: 4,
  padding: 3,
  padchar: ' ',
  rememberWidths: true,
});

/** DESCRIBE_TABWRITER is the writer of `kubectl describe` (kubectl's tabbedString: 0, 8, 2, ' ', 0). */
export const DESCRIBE_TABWRITER: Readonly<TabWriterSettings> = Object.freeze({
  minwidth: 0,
  tabwidth: 8,
  padding: 2,
  padchar: ' ',
});

/** TabWriter is an incremental elastic-tabstop writer; output goes to the sink it was created with. */
export interface TabWriter {
  /** write buffers text; a line that holds a single cell, or a '\f', flushes what came before. */
  write(text: string): void;
  /** flush formats and emits everything buffered. */
  flush(): void;
  /** rememberedWidths is a copy of the per-column widths kept by rememberWidths. */
  rememberedWidths(): number[];
  /** setRememberedWidths replaces the remembered widths (kubectl resets them between resource kinds). */
  setRememberedWidths(widths: number[]): void;
}

interface Cell {
  text: string;
  width: number;
  htab: boolean;
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** createTabWriter returns a TabWriter that sends formatted text to `output`. */
export function createTabWriter(settings: TabWriterSettings, output: (chunk: string) => void): TabWriter {
  const { minwidth, tabwidth, padding, padchar } = settings;
  if (minwidth < 0 || tabwidth < 0 || padding < 0) throw new RangeError('negative minwidth, tabwidth, or padding');
  let lines: Cell[][] = [[]];
  let cell = '';
  let widths: number[] = [];
  let maxwidths: number[] = [];

  const terminateCell = (htab: boolean): number => {
    const line = lines[lines.length - 1]!;
    line.push({ text: cell, width: (settings.width ?? runeCount)(cell), htab });
    cell = '';
    return line.length;
  };

  const writePadding = (textw: number, cellw: number, useTabs: boolean): void => {
    if (padchar === '\t' || useTabs) {
      if (tabwidth === 0) return;
      // Round the cell up to a whole number of tab stops.
      const stop = Math.ceil(cellw / tabwidth) * tabwidth;
      output('\t'.repeat(Math.ceil((stop - textw) / tabwidth)));
      return;
    }
    output(padchar.repeat(cellw - textw));
  };

  const writeLines = (line0: number, line1: number): void => {
    for (let i = line0; i < line1; i++) {
      const line = lines[i]!;
      let useTabs = settings.tabIndent === true;
      line.forEach((c, j) => {
        if (j > 0 && settings.debug) output('|');
        const w = widths[j];
        if (c.text === '') {
          if (w !== undefined) writePadding(c.width, w, useTabs);
        } else {
          useTabs = false;
          if (!settings.alignRight) {
            output(c.text);
            if (w !== undefined) writePadding(c.width, w, false);
          } else {
            if (w !== undefined) writePadding(c.width, w, false);
            output(c.text);
          }
        }
      });
      if (i + 1 === lines.length) output(cell);
      else output('\n');
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= lines[t]!.length - 1) continue;
      // A cell in this column starts a block: print what precedes it.
      writeLines(line0, t);
      line0 = t;
      let width = minwidth;
      let discardable = true;
      for (; t < line1; t++) {
        const line = lines[t]!;
        if (column >= line.length - 1) break;
        const c = line[column]!;
        width = Math.max(width, c.width + padding);
        if (c.width > 0 || c.htab) discardable = false;
      }
      if (discardable && settings.discardEmptyColumns) width = 0;
      if (settings.rememberWidths) {
        if (maxwidths.length < widths.length) maxwidths.push(...widths.slice(maxwidths.length));
        const remembered = maxwidths[widths.length];
        if (remembered === undefined) maxwidths.push(width);
        else if (remembered > width) width = remembered;
        else maxwidths[widths.length] = width;
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };

  const flush = (): void => {
    if (cell !== '') terminateCell(false);
    format(0, lines.length);
    lines = [[]];
    cell = '';
    widths = [];
  };

  return {
    write(text: string): void {
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        const ch = text[i];
        if (ch !== '\t' && ch !== '\v' && ch !== '\n' && ch !== '\f') continue;
        cell += text.slice(start, i);
        start = i + 1;
        const ncells = terminateCell(ch === '\t');
        if (ch === '\n' || ch === '\f') {
          lines.push([]);
          // A one-cell line cannot affect the layout of later lines.
          if (ch === '\f' || ncells === 1) {
            flush();
            if (ch === '\f' && settings.debug) output('---\n');
          }
        }
      }
      cell += text.slice(start);
    },
    flush,
    rememberedWidths: () => [...maxwidths],
    setRememberedWidths(w: number[]): void {
      maxwidths = [...w];
    },
  };
}

/**
 * formatTable renders rows of cells through a tabwriter: cells joined by '\t',
 * each row ended by '\n', then flushed. Defaults to kubectl's writer.
 */
export function formatTable(rows: string[][], settings: TabWriterSettings = KUBECTL_TABWRITER): string {
  return formatTabbed(rows.map((r) => `${r.join('\t')}\n`).join(''), settings);
}

/** formatTabbed renders already tab-separated text through a tabwriter and flushes it. */
export function formatTabbed(text: string, settings: TabWriterSettings = KUBECTL_TABWRITER): string {
  let out = '';
  const w = createTabWriter(settings, (s) => {
    out += s;
  });
  w.write(text);
  w.flush();
  return out;
}

/** KUBECTL_MINOR is the kubectl minor release whose printing the helpers reproduce by default. */
export const KUBECTL_MINOR = 36;

/** KubectlTableOptions are the kubectl get flags that shape a server-side Table. */
export interface KubectlTableOptions {
  /** wide is `-o wide`: columns of priority other than 0 are shown. */
  wide?: boolean;
  /** noHeaders is `--no-headers`. */
  noHeaders?: boolean;
  /** withNamespace is `-A`: a NAMESPACE column taken from each row's object metadata. */
  withNamespace?: boolean;
  /**
   * kubectlMinor selects the cli-runtime generation: from 1.37 the widest cell of
   * each column is measured up front (in bytes) and written into the header, and
   * the writer is flushed every 100 rows.
   */
  kubectlMinor?: number;
}

const CELL_BREAK = /[\f\n\r]/;
const FLUSH_INTERVAL = 100;
const utf8 = new TextEncoder();

/**
 * goSprint prints a decoded JSON value as Go's fmt.Sprint prints what kubectl
 * decodes from a Table cell: integers as int64, other numbers as %v float64,
 * objects as `map[k:v]` with sorted keys, arrays as `[a b]`.
 */
function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goSprint(o[k])}`)
      .join(' ')}]`;
  }
  return typeof v === 'bigint' ? v.toString() : '';
}

function goNumber(n: number): string {
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? n.toFixed(0) : BigInt(n).toString();
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? '+Inf' : '-Inf';
  // Go's %v of a float64 is %g with the shortest digits, in exponent form when the
  // exponent is below -4 or at least 6 (JavaScript switches only at 21).
  const [mantissa = '', expText = '0'] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

function rowNamespace(object: unknown): string | null {
  // Without an object (includeObject=None) kubectl has no accessor and leaves the cell empty.
  if (object === null || typeof object !== 'object') return null;
  const metadata = (object as { metadata?: unknown }).metadata;
  const ns = metadata !== null && typeof metadata === 'object' ? (metadata as { namespace?: unknown }).namespace : '';
  return typeof ns === 'string' ? ns : '';
}

/**
 * printTableAsKubectl renders a server-side Table as `kubectl get` prints it
 * (cli-runtime tableprinter): upper-cased headers, only priority-0 columns
 * unless wide, a NAMESPACE column first with -A, null cells empty, other
 * non-strings through Go's fmt.Sprint, string cells cut at the first
 * '\n', '\r' or '\f' with `...` appended and ESC escaped. An empty table prints
 * nothing, headers included.
 */
export function printTableAsKubectl(table: Table, options: KubectlTableOptions = {}): string {
  const wide = options.wide === true;
  const minor = options.kubectlMinor ?? KUBECTL_MINOR;
  let columns: TableColumnDefinition[] = table.columnDefinitions;
  let rows: unknown[][] = table.rows.map((r) => r.cells);
  if (options.withNamespace) {
    columns = [{ name: 'Namespace', type: 'string', format: '', description: '', priority: 0 }, ...columns];
    rows = table.rows.map((r) => [rowNamespace(r.object), ...r.cells]);
  }
  const visible = (i: number): boolean => wide || columns[i]!.priority === 0;
  const cellText = (c: unknown): string => (typeof c === 'string' ? c : goSprint(c));

  let out = '';
  const w = createTabWriter(KUBECTL_TABWRITER, (s) => {
    out += s;
  });
  const prescan = minor >= 37 && rows.length > 0;
  const maxCellWidths = columns.map(() => 0);
  if (prescan) {
    for (const cells of rows) {
      cells.forEach((c, i) => {
        if (i >= columns.length || !visible(i) || c === null || c === undefined) return;
        maxCellWidths[i] = Math.max(maxCellWidths[i]!, utf8.encode(cellText(c)).length);
      });
    }
  }
  let lastVisible = -1;
  columns.forEach((_, i) => {
    if (visible(i)) lastVisible = i;
  });
  const pad = (i: number, len: number): string =>
    prescan && i !== lastVisible ? ' '.repeat(Math.max(0, maxCellWidths[i]! - len)) : '';

  if (!options.noHeaders) {
    if (rows.length === 0) return '';
    const header: string[] = [];
    columns.forEach((c, i) => {
      if (!visible(i)) return;
      const name = c.name.toUpperCase();
      header.push(name + pad(i, utf8.encode(name).length));
    });
    w.write(`${header.join('\t')}\n`);
  }
  const padFirstRow = prescan && options.noHeaders === true;
  rows.forEach((cells, ri) => {
    const parts: string[] = [];
    cells.forEach((c, i) => {
      if (i >= columns.length || !visible(i)) return;
      let text = '';
      let len = 0;
      if (c !== null && c !== undefined) {
        const raw = cellText(c);
        len = utf8.encode(raw).length;
        // Before 1.37 only string cells were cut at a line break.
        const brk = typeof c === 'string' || minor >= 37 ? raw.search(CELL_BREAK) : -1;
        text = brk >= 0 ? `${escapeTerminal(raw.slice(0, brk))}...` : escapeTerminal(raw);
      }
      parts.push(padFirstRow && ri === 0 ? text + pad(i, len) : text);
    });
    w.write(`${parts.join('\t')}\n`);
    if (minor >= 37 && (ri + 1) % FLUSH_INTERVAL === 0) w.flush();
  });
  w.flush();
  return out;
}
