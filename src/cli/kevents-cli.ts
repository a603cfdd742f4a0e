import type { CliShape } from './run.js';

/** keventsCli is the `kevents` command: every subcommand, from the full command table. */
export const keventsCli: CliShape = {
  name: 'kevents',
  description: 'kevents: record, serve, keep and read Kubernetes Events',
  commands: () => import('./command-table.js'),
};
