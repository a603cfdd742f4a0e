#!/usr/bin/env node
import { keventsCli } from './kevents-cli.js';
import { runCli } from './run.js';

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}, keventsCli);
