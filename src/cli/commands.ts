import type { Command } from 'commander';
import type { CliIO } from './run.js';

/** register adds every kevents subcommand to the program. */
export function register(_program: Command, _io: CliIO): void {
  // Subcommands are added here as they arrive.
}
