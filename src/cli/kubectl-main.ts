#!/usr/bin/env node
// kubectl-kevents: `kubectl kevents incidents|search|timeline|events …`, kevents' read commands through the current
// kubeconfig context, where the cluster aggregates the archive API (docs/deploy.md): the archive's events
// (events.archive.kevents.io) stand in for the cluster's own, so a timeline reaches past the cluster's TTL.
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  archiveEvents: true,
});
