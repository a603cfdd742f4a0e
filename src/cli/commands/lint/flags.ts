// The flags of `kevents lint`, apart from lint.ts so that the read table adds them without loading the command.
import type * as Commander from 'commander';
import type { Command } from 'commander';
import { requireCjs } from '../../../internal/index.js';
import type { ReadConnectionFlags } from '../../flags/connection.js';
import type { CliIO } from '../../io.js';
import { parseFlags, withConnection } from '../../read/read-flags.js';
import type { CommanderOptions, FlagSpec } from '../../read/read-flags.js';

const { Option } = requireCjs('commander') as typeof Commander;

/** LintFlags are the flags of `kevents lint`. */
export interface LintFlags extends ReadConnectionFlags {
  output?: string;
  /** failOnFindings makes any broken convention exit 1 (for CI). */
  failOnFindings?: boolean;
}

/** addLintFlags adds the options of `kevents lint` (read into LintFlags by parseLintFlags) to its command. */
export function addLintFlags(c: Command, io: CliIO): Command {
  return withConnection(
    c
      .option('-n, --namespace <ns>', 'namespace (default: every namespace)')
      .option('-A, --all-namespaces', 'every namespace (the default)')
      .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
      .option('--fail-on-findings', 'exit 1 when any event breaks a convention'),
    io,
  );
}

/** LINT_FLAGS names the kind of each flag of LintFlags. */
const LINT_FLAGS: FlagSpec<LintFlags> = { output: 'string', failOnFindings: 'boolean' };

/** parseLintFlags reads commander's options of `kevents lint` into LintFlags: every namespace unless -n names one. */
export function parseLintFlags(opts: CommanderOptions): LintFlags {
  const flags = parseFlags(LINT_FLAGS, opts);
  return { ...flags, allNamespaces: flags.namespace === undefined };
}
