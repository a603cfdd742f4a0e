import type * as Commander from 'commander';
import { escapeTerminal, isStatusError } from '../api/index.js';
import { UsageError } from './errors.js';
import type { CliIO } from './io.js';
import { version } from './version.js';
import { requireCjs } from '../internal/index.js';

const { Command, CommanderError, Help } = requireCjs('commander') as typeof Commander;

/** HELP_WIDTH is the width every help page is wrapped at, whatever the terminal: kubectl's pages read at 80 columns too. */
const HELP_WIDTH = 80;

/** MIN_DESCRIPTION_WIDTH is the narrowest column a description is wrapped into beside its flag; narrower, it goes under it. */
const MIN_DESCRIPTION_WIDTH = 40;

/**
 * formatHelpItem lays out one flag or command of a help page: its description beside it, wrapped, as commander
 * does, or, where the flags are too wide to leave MIN_DESCRIPTION_WIDTH beside them (`mirror`, `export`, `serve`),
 * under it, indented and wrapped at HELP_WIDTH, as kubectl prints its flags, instead of one line of 200 characters.
 */
function formatHelpItem(term: string, termWidth: number, description: string, helper: Commander.Help): string {
  if (description === '' || HELP_WIDTH - termWidth - 4 >= MIN_DESCRIPTION_WIDTH) return Help.prototype.formatItem.call(helper, term, termWidth, description, helper);
  const indent = ' '.repeat(6);
  const wrapped = helper.boxWrap(description, HELP_WIDTH - indent.length);
  return `  ${term}\n${wrapped.split('\n').map((line) => indent + line).join('\n')}`;
}

/** CommandTable is a module that adds its subcommands to the program (command-table.ts, read-command-table.ts). */
export interface CommandTable {
  register(program: Commander.Command, io: CliIO): void;
}

/**
 * CliShape is which program runCli is: its name and description in help, and its table, loaded once argv is known.
 * The caller names the table, so that a bundle of one program (the krew plugin's) holds no other's commands.
 */
export interface CliShape {
  name: string;
  description: string;
  commands: () => Promise<CommandTable>;
}

/**
 * runCli parses argv and runs one command. It is the single error boundary of the
 * CLI: usage errors exit 2, API errors print like kubectl and exit 1, anything
 * else is a bug and prints its stack.
 */
export async function runCli(argv: string[], io: CliIO, shape: CliShape): Promise<number> {
  const program = new Command(shape.name)
    .description(shape.description)
    .version(version, '-v, --version', 'print the kevents version')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ helpWidth: HELP_WIDTH, formatItem: formatHelpItem })
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .exitOverride();

  program
    .command('version')
    .description('print the kevents version')
    .action(() => {
      io.stdout.write(`kevents ${version}\n`);
    });

  (await shape.commands()).register(program, io);

  try {
    if (argv.length === 0) {
      program.outputHelp();
      return 0;
    }
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    return reportError(e, io);
  }
}

function reportError(e: unknown, io: CliIO): number {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return 0;
    return e.exitCode === 0 ? 0 : 2;
  }
  if (e instanceof UsageError) {
    io.stderr.write(`error: ${e.message}\n(run with --help for usage)\n`);
    return 2;
  }
  if (isStatusError(e)) {
    // A server's message repeats names and values from the request and the store: escaped like any event text.
    io.stderr.write(`Error from server (${escapeTerminal(e.status.reason ?? 'Unknown')}): ${escapeTerminal(e.status.message ?? '')}\n`);
    return 1;
  }
  if (typeof e === 'object' && e !== null && (e as { userFacing?: unknown }).userFacing === true) {
    io.stderr.write(`error: ${escapeTerminal((e as Error).message)}\n`);
    return 1;
  }
  io.stderr.write(`kevents: internal error (a bug; please report it):\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return 70;
}
