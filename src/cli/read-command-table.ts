// The read commands' table (get events, events, timeline, incidents, search, lint): the whole of `kubectl kevents`,
// which reads through a cluster or a server and so carries no storage, server or lab code (its krew bundle is one file
// with no native module), and the part of `kevents` that reads. Each command's flags are its flags.ts (typed, and
// light enough to load here); its code is imported only when it runs.
import type { Command } from 'commander';
import type { CliIO } from './io.js';
import { addEventsFlags, parseEventsFlags } from './commands/events/flags.js';
import { addGetEventsFlags, parseGetEventsFlags } from './commands/get/flags.js';
import { addIncidentsFlags, parseIncidentsFlags } from './commands/incidents/flags.js';
import { addLintFlags, parseLintFlags } from './commands/lint/flags.js';
import { addSearchFlags, parseSearchFlags } from './commands/search/flags.js';
import { addTimelineFlags, parseTimelineFlags } from './commands/timeline/flags.js';
import type { CommanderOptions } from './read/read-flags.js';

/** registerReadCommands adds the commands that read events: get events, events, timeline, incidents, search and lint. */
export function registerReadCommands(program: Command, io: CliIO): void {
  addGetEventsFlags(
    program
      .command('get')
      .description('list events as kubectl get events prints them (from any API server or kevents archive)')
      .argument('<resource>', 'events (or ev)')
      .argument('[names...]', 'event names'),
    io,
  ).action(async (resource: string, names: string[], opts: CommanderOptions) => {
    const { runGetEvents } = await import('./commands/get/get-events.js');
    await runGetEvents(resource, names, parseGetEventsFlags(opts), io);
  });

  addEventsFlags(
    program
      .command('events')
      .description('list events as kubectl events prints them: sorted by last seen, with --for and --types'),
    io,
  ).action(async (opts: CommanderOptions) => {
    const { runEvents } = await import('./commands/events/events.js');
    await runEvents(parseEventsFlags(opts), io);
  });

  addTimelineFlags(
    program
      .command('timeline')
      .description('an incident timeline: one row per occurrence, in time order, with a summary and next steps'),
    io,
  ).action(async (opts: CommanderOptions) => {
    const { runTimeline } = await import('./commands/timeline/timeline.js');
    await runTimeline(parseTimelineFlags(opts), io);
  });

  addIncidentsFlags(
    program
      .command('incidents')
      .description('what is broken, since when and why: one line per incident (its root object and cause), most recent first'),
    io,
  ).action(async (opts: CommanderOptions) => {
    const { runIncidents } = await import('./commands/incidents/incidents.js');
    await runIncidents(parseIncidentsFlags(opts), io);
  });

  addSearchFlags(
    program
      .command('search')
      .description('search the archive: words, "phrases", -exclusions and fields such as reason:, name:web-*, node: (docs/search.md), newest first')
      .argument('<query...>', 'the query (its words are joined with spaces; quote phrases for the shell, e.g. \'"x509: certificate has expired"\')'),
    io,
  ).action(async (query: string[], opts: CommanderOptions) => {
    const { runSearch } = await import('./commands/search/search.js');
    await runSearch(query, parseSearchFlags(opts), io);
  });

  addLintFlags(
    program
      .command('lint')
      .description('events that break the conventions (reason case, types, messages, reporting controller), with counts'),
    io,
  ).action(async (opts: CommanderOptions) => {
    const { runLint } = await import('./commands/lint/lint.js');
    await runLint(parseLintFlags(opts), io);
  });
}

/** register adds the read commands alone: the command table of `kubectl kevents`. */
export function register(program: Command, io: CliIO): void {
  registerReadCommands(program, io);
}
