#!/usr/bin/env node
// Dumps what the built CLI says about itself: every command's and subcommand's --help, of `kevents` and of
// `kubectl-kevents`, and the usage errors (an unknown flag, a missing argument, a bad value), each with its
// stdout, stderr and exit code, into one text file. test/cli-help-dump.test.ts compares it byte for byte with
// test/golden/cli-help.txt, so that moving code under src/cli changes no word a user reads; a deliberate change
// regenerates the golden file in the same commit:
//   npm run build && node scripts/cli-dump.mjs test/golden/cli-help.txt
// The commands are found by reading each help page's "Commands:" list, so a new one is dumped without an edit here.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** PROGRAMS are the two built entry points, by the name a user types. */
const PROGRAMS = [
  { name: 'kevents', script: join(root, 'dist/bin/kevents.js') },
  { name: 'kubectl-kevents', script: join(root, 'dist/bin/kubectl-kevents.js') },
];

/**
 * VALUE_ERRORS are bad values a command refuses before it reads or listens anywhere (commander's choices are found
 * from the help pages): a run that reached a server would dump what the machine has, not what the CLI says.
 */
const VALUE_ERRORS = [
  ['timeline', '--since', 'bogus'],
  ['timeline', '--since'],
  ['search', '--limit', 'x', 'word'],
  ['incidents', '--look-back', '30d'],
  ['get', 'pods'],
  ['get', 'events', '--chunk-size', '-1'],
  ['events', '--for', 'nokind'],
  ['events', '--types', 'Bogus'],
  ['record'],
  ['mirror'],
  ['export'],
  ['serve', '--storage', 'bogus:x'],
  ['serve', '--listen', 'nope'],
  ['archive', 'stats', '--storage', 'bogus:'],
  ['lab', 'exercise', '99'],
];

/** CONCURRENCY bounds the programs started at once: the dump runs on small shared machines. */
const CONCURRENCY = 3;

function runOnce(script, args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : `killed (${error.signal ?? error.message})`;
      resolve({ code, stdout, stderr });
    });
  });
}

/** subcommands reads the names in a help page's "Commands:" list (commander's own `help` left out). */
function subcommands(help) {
  const at = help.indexOf('\nCommands:\n');
  if (at < 0) return [];
  const names = [];
  for (const line of help.slice(at + '\nCommands:\n'.length).split('\n')) {
    if (!line.startsWith('  ')) break;
    const m = /^ {2}([a-z][\w-]*)/.exec(line);
    if (m !== null && m[1] !== 'help') names.push(m[1]);
  }
  return names;
}

/** choiceFlags reads the flags with commander choices from a help page: each gets a value outside them. */
function choiceFlags(help) {
  const flags = [];
  const items = help.split(/\n(?= {2}-)/);
  for (const item of items) {
    if (!/\(choices: /.test(item.replace(/\s+/g, ' '))) continue;
    const m = /^ {2}(?:-\w, )?(--[\w-]+)/.exec(item);
    if (m !== null) flags.push(m[1]);
  }
  return flags;
}

/** requiredArguments says whether a help page's usage line names an argument in <angle brackets>. */
function hasRequiredArgument(help) {
  const usage = help.split('\n', 1)[0] ?? '';
  return /<[^>]+>/.test(usage);
}

async function pool(tasks) {
  const results = new Array(tasks.length);
  let next = 0;
  async function worker() {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, tasks.length) }, worker));
  return results;
}

/** dumpCli runs every invocation and returns the dump's text. */
export async function dumpCli() {
  const home = mkdtempSync(join(tmpdir(), 'kevents-cli-dump-'));
  try {
    // A bare environment: no kubeconfig, no KEVENTS_SERVER default in the help pages, no colour; and `kevents` on the
    // PATH as this build, so the commands the CLI prints in its errors read "kevents …" rather than this path.
    symlinkSync(PROGRAMS[0].script, join(home, 'kevents'));
    const env = { PATH: `${home}:/usr/bin:/bin`, HOME: home, NO_COLOR: '1', LANG: 'C.UTF-8' };
    const sections = [];
    for (const program of PROGRAMS) {
      const invocations = [[], ['--version'], ['version'], ['help'], ['no-such-command']];
      // Breadth first over the command tree, by help pages.
      const queue = [[]];
      const helps = new Map();
      while (queue.length > 0) {
        const level = queue.splice(0);
        const runs = await pool(level.map((path) => () => runOnce(program.script, [...path, '--help'], env)));
        level.forEach((path, i) => {
          const r = runs[i];
          helps.set(path.join(' '), { path, run: r });
          for (const name of subcommands(r.stdout)) queue.push([...path, name]);
        });
      }
      const errors = [];
      for (const { path, run } of helps.values()) {
        if (path.length === 0) continue;
        const groups = subcommands(run.stdout);
        if (groups.length > 0) {
          errors.push([...path, 'no-such-command']);
          continue;
        }
        errors.push([...path, '--no-such-flag']);
        if (hasRequiredArgument(run.stdout)) errors.push(path);
        for (const flag of choiceFlags(run.stdout)) errors.push([...path, flag, 'no-such-value']);
      }
      const known = new Set(helps.keys());
      for (const args of VALUE_ERRORS) {
        if (known.has(args[0]) || known.has(args.slice(0, 2).join(' '))) errors.push(args);
      }
      const rest = [...invocations, ...errors];
      const restRuns = await pool(rest.map((args) => () => runOnce(program.script, args, env)));
      const all = [
        ...[...helps.values()].map(({ path, run }) => ({ args: [...path, '--help'], run })),
        ...rest.map((args, i) => ({ args, run: restRuns[i] })),
      ];
      for (const { args, run } of all) {
        sections.push(
          `$ ${[program.name, ...args].join(' ')}\n` +
            `exit: ${run.code}\n` +
            `--- stdout\n${run.stdout}${run.stdout.endsWith('\n') || run.stdout === '' ? '' : '\n[no newline at end]\n'}` +
            `--- stderr\n${run.stderr}${run.stderr.endsWith('\n') || run.stderr === '' ? '' : '\n[no newline at end]\n'}`,
        );
      }
    }
    return sections.join('\n');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = await dumpCli();
  const out = process.argv[2];
  if (out === undefined || out === '-') process.stdout.write(text);
  else writeFileSync(out, text);
}
