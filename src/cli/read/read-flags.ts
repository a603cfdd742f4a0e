// What every read command's flags.ts shares: the connection flags, and the readers that turn commander's untyped
// options into typed flags. Below the commands, and light (commander's types only), so that the read table adds every
// command's flags without loading any command.
import type { Command } from 'commander';
import type { ReadConnectionFlags } from '../flags/connection.js';
import type { CliIO } from '../io.js';

/** CommanderOptions are the values commander collected for one command, keyed by camel-cased flag name. */
export type CommanderOptions = Record<string, unknown>;

/** withConnection adds --server, --kubeconfig and --context, kubectl's way of naming a server, after a command's own flags. */
export function withConnection(c: Command, io: CliIO): Command {
  return c
    .option('--server <url>', 'API server or kevents archive URL (no kubeconfig needed), like kubectl --server', io.env.KEVENTS_SERVER)
    .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context');
}

// A value of another type than the flag's definition gives is a bug in the table, not a user's mistake: it throws a
// TypeError, which the CLI's error boundary reports as one.
function wrongType(name: string, want: string, value: unknown): TypeError {
  return new TypeError(`flag ${name}: commander gave ${typeof value}, the definition gives ${want}`);
}

/** stringFlag reads a flag that takes a value (`--since <duration>`). */
export function stringFlag(opts: CommanderOptions, name: string): string | undefined {
  const v = opts[name];
  if (v === undefined || typeof v === 'string') return v;
  throw wrongType(name, 'a string', v);
}

/** booleanFlag reads a flag that takes no value (`--watch`), or a negated one (`--no-archive` is `archive: false`). */
export function booleanFlag(opts: CommanderOptions, name: string): boolean | undefined {
  const v = opts[name];
  if (v === undefined || typeof v === 'boolean') return v;
  throw wrongType(name, 'a boolean', v);
}

/** stringsFlag reads a repeatable flag (`--cluster a --cluster b`, collected). */
export function stringsFlag(opts: CommanderOptions, name: string): string[] | undefined {
  const v = opts[name];
  if (v === undefined || (Array.isArray(v) && v.every((s) => typeof s === 'string'))) return v;
  throw wrongType(name, 'a list of strings', v);
}

/** noHeaders reads `--no-headers`, which commander keeps as `headers: false`. */
export function noHeaders(opts: CommanderOptions): boolean {
  return booleanFlag(opts, 'headers') === false;
}

/** FlagKind is how commander hands over a flag's value: a string, a boolean (`--watch`, `--no-archive`), or a list. */
export type FlagKind = 'string' | 'boolean' | 'strings';

type KindOf<T> = T extends readonly string[] ? 'strings' : T extends boolean ? 'boolean' : 'string';

/**
 * FlagSpec names the kind of each of a command's own flags, every one of them (the type checker holds the spec to the
 * flags' interface); the connection's flags and `--no-headers` are read for every command that has them.
 */
export type FlagSpec<F> = { readonly [K in Exclude<keyof F, keyof ReadConnectionFlags | 'noHeaders'>]-?: KindOf<NonNullable<F[K]>> };

/** parseFlags reads commander's options into a read command's typed flags, as its spec says. */
export function parseFlags<F extends ReadConnectionFlags>(spec: FlagSpec<F>, opts: CommanderOptions): F {
  const flags: Record<string, unknown> = { ...parseReadConnectionFlags(opts) };
  for (const [name, kind] of Object.entries<FlagKind>(spec)) {
    flags[name] = kind === 'string' ? stringFlag(opts, name) : kind === 'boolean' ? booleanFlag(opts, name) : stringsFlag(opts, name);
  }
  // commander keeps `--no-headers` as `headers`, true by default, on the commands that define it.
  if ('headers' in opts) flags.noHeaders = noHeaders(opts);
  return flags as F;
}

/** parseReadConnectionFlags reads the flags every read command has: the server, and the namespace to read. */
export function parseReadConnectionFlags(opts: CommanderOptions): ReadConnectionFlags {
  return {
    server: stringFlag(opts, 'server'),
    kubeconfig: stringFlag(opts, 'kubeconfig'),
    context: stringFlag(opts, 'context'),
    namespace: stringFlag(opts, 'namespace'),
    allNamespaces: booleanFlag(opts, 'allNamespaces'),
  };
}
