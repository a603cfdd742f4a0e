/** LogLevel orders log messages by severity. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** LogFields are structured key/values attached to a log message. */
export type LogFields = Record<string, unknown>;

/** Logger is the structured logger kevents modules take (injected, never global). */
export interface Logger {
  error(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
}

const rank: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

/** ConsoleLoggerOptions configure createConsoleLogger. */
export interface ConsoleLoggerOptions {
  /** level is the most verbose level written (default info). */
  level?: LogLevel;
  /** stream receives one JSON object per line (default process.stderr). */
  stream?: { write(s: string): unknown };
  now?: () => number;
}

function jsonSafe(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    // Errors serialise to {} by default; keep what a reader needs.
    out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  }
  return out;
}

/** createConsoleLogger writes JSON lines: `{"time","level","msg",...fields}`. */
export function createConsoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  const max = rank[options.level ?? 'info'];
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const write = (level: LogLevel, msg: string, fields?: LogFields): void => {
    if (rank[level] > max) return;
    const line = { time: new Date(now()).toISOString(), level, msg, ...(fields ? jsonSafe(fields) : {}) };
    let text: string;
    try {
      text = JSON.stringify(line);
    } catch {
      text = JSON.stringify({ time: line.time, level, msg, fields: '<unserialisable>' });
    }
    stream.write(text + '\n');
  };
  return {
    error: (m, f) => write('error', m, f),
    warn: (m, f) => write('warn', m, f),
    info: (m, f) => write('info', m, f),
    debug: (m, f) => write('debug', m, f),
  };
}

/** noopLogger discards everything. */
export const noopLogger: Logger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
};

/** LogEntry is one message kept by a CollectingLogger. */
export interface LogEntry {
  level: LogLevel;
  msg: string;
  fields: LogFields;
}

/** CollectingLogger keeps every message in memory, for tests that assert on logs. */
export class CollectingLogger implements Logger {
  readonly entries: LogEntry[] = [];
  error(msg: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'error', msg, fields });
  }
  warn(msg: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'warn', msg, fields });
  }
  info(msg: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'info', msg, fields });
  }
  debug(msg: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'debug', msg, fields });
  }
  /** messages lists the texts logged at a level (all levels when omitted). */
  messages(level?: LogLevel): string[] {
    return this.entries.filter((e) => level === undefined || e.level === level).map((e) => e.msg);
  }
}
