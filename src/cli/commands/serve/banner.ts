// What kevents serve prints once it listens: its printer, apart from the command that gathers the facts.
import { formatGoDuration } from '../../flags/duration.js';

/** BannerFacts are what the start banner of `kevents serve` reports. */
export interface BannerFacts {
  url: string;
  /** ui is true when the built web UI is served at `/`. */
  ui: boolean;
  /** auth says how requests are authenticated (none on loopback by default). */
  auth?: string;
  storage: string;
  ttlMs: number;
  mirror: string | undefined;
  /** kevents is how the user runs kevents from where they stand (selfCommand). */
  kevents: string;
  /** workers is how many processes answer requests (`--workers`); 1 is this one. */
  workers?: number;
  /** writerThread is whether the file's writes are committed on a thread of their own (`--writer-thread`). */
  writerThread?: boolean;
}

/**
 * serveBanner is what `kevents serve` prints once it listens: where, the web
 * UI, and first commands (record, timeline, incidents, search, kubectl), each
 * of which runs as printed in another terminal of the same directory (kevents
 * named the way this one was started).
 */
export function serveBanner(b: BannerFacts): string {
  const server = `--server ${b.url}`;
  return [
    `kevents serve: listening on ${b.url}`,
    `  web UI:    ${b.ui ? `${b.url}/` : 'not built (run "npm run build" in the kevents checkout)'}`,
    `  storage:   ${b.storage}`,
    ...(b.workers !== undefined && b.workers > 1 ? [`  workers:   ${b.workers} processes answer requests; this one (pid ${process.pid}) keeps the file`] : []),
    ...(b.writerThread === true ? ['  writes:    committed on a thread of their own (--writer-thread)'] : []),
    ...(b.auth !== undefined ? [`  auth:      ${b.auth}`] : []),
    `  event TTL: ${b.ttlMs === 0 ? 'none (events are kept forever)' : formatGoDuration(b.ttlMs)}`,
    ...(b.mirror !== undefined && b.mirror !== '' ? [`  mirror:    ${b.mirror} (archived events never expire)`] : []),
    '',
    'In another terminal, record an event and read it back:',
    `  ${b.kevents} record ${server} --for pod/web-1 --type Warning --reason BackOff --action Restarting --message "Back-off restarting failed container"`,
    `  ${b.kevents} timeline ${server} -A`,
    'See what is broken and why, and search everything kept:',
    `  ${b.kevents} incidents ${server} -A`,
    `  ${b.kevents} search ${server} -A reason:BackOff`,
    'Point kubectl at it:',
    `  kubectl --server ${b.url} get events -A`,
    'or write a kubeconfig:',
    `  ${b.kevents} kubeconfig ${server} > kevents.kubeconfig && export KUBECONFIG=$PWD/kevents.kubeconfig`,
    '',
  ].join('\n');
}
