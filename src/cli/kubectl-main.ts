#!/usr/bin/env node
// kubectl-kevents: `kubectl kevents incidents|search|timeline|events …`, kevents' read commands through the current
// kubeconfig context, where the cluster aggregates the archive API (docs/deploy.md): the archive's events
// (events.archive.kevents.io) stand in for the cluster's own, so a timeline reaches past the cluster's TTL. Only the
// read commands: `kubectl kevents serve` has nothing to do with a cluster, and the krew bundle
// (scripts/plugin-release.mjs) stays one file with no native module.
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  archiveEvents: true,
}, {
  name: 'kubectl kevents',
  description: "kubectl kevents: read the kevents archive (incidents, timelines, search, events) through the current kubeconfig context",
  commands: () => import('./read-command-table.js'),
});
