import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type * as Commander from 'commander';
import { requireCjs } from '../../internal/index.js';
import { addGetEventsFlags, parseGetEventsFlags } from '../commands/get/flags.js';
import { addLintFlags, parseLintFlags } from '../commands/lint/flags.js';
import { addTimelineFlags, parseTimelineFlags } from '../commands/timeline/flags.js';
import type { CliIO } from '../io.js';
import { booleanFlag, stringFlag, stringsFlag } from './read-flags.js';
import type { CommanderOptions } from './read-flags.js';

const { Command } = requireCjs('commander') as typeof Commander;

const io = { stdout: process.stdout, stderr: process.stderr, env: {} } as CliIO;

/** parsed runs commander over argv with one command's flags, as the read table does, and returns what it collected. */
function parsed(add: (c: Commander.Command, io: CliIO) => Commander.Command, argv: string[]): CommanderOptions {
  let opts: CommanderOptions = {};
  const program = new Command('kevents').exitOverride();
  add(program.command('x').argument('[rest...]'), io).action((_rest: string[], o: CommanderOptions) => {
    opts = o;
  });
  program.parse(['x', ...argv], { from: 'user' });
  return opts;
}

void describe('read commands: commander options to typed flags', () => {
  void it('timeline: values, repeats, --no-archive and the default output', () => {
    const flags = parseTimelineFlags(parsed(addTimelineFlags, ['--for', 'deploy/web', '-n', 'shop', '--since', '2h', '--types', 'Warning', '--cluster', 'a', '--cluster', 'b', '--no-archive']));
    assert.deepEqual(
      { for: flags.for, namespace: flags.namespace, since: flags.since, types: flags.types, cluster: flags.cluster, archive: flags.archive, output: flags.output, expand: flags.expand },
      { for: 'deploy/web', namespace: 'shop', since: '2h', types: ['Warning'], cluster: ['a', 'b'], archive: false, output: 'table', expand: undefined },
    );
  });

  void it('get: --no-headers becomes noHeaders, and the chunk size keeps its default', () => {
    assert.equal(parseGetEventsFlags(parsed(addGetEventsFlags, ['--no-headers'])).noHeaders, true);
    const flags = parseGetEventsFlags(parsed(addGetEventsFlags, ['-A', '-w']));
    assert.deepEqual([flags.noHeaders, flags.allNamespaces, flags.watch, flags.chunkSize], [false, true, true, '500']);
  });

  void it('lint: every namespace unless -n names one', () => {
    assert.equal(parseLintFlags(parsed(addLintFlags, [])).allNamespaces, true);
    const one = parseLintFlags(parsed(addLintFlags, ['-n', 'shop', '--fail-on-findings']));
    assert.deepEqual([one.allNamespaces, one.namespace, one.failOnFindings], [false, 'shop', true]);
  });

  void it('refuses a value of another type than the definition gives (a bug in the table)', () => {
    assert.throws(() => stringFlag({ since: true }, 'since'), TypeError);
    assert.throws(() => booleanFlag({ watch: 'yes' }, 'watch'), TypeError);
    assert.throws(() => stringsFlag({ cluster: 'a' }, 'cluster'), TypeError);
    assert.throws(() => stringsFlag({ cluster: ['a', 1] }, 'cluster'), TypeError);
    assert.deepEqual([stringFlag({}, 'since'), booleanFlag({}, 'watch'), stringsFlag({}, 'cluster')], [undefined, undefined, undefined]);
  });
});
