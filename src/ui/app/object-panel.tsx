import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CoreEvent, Timeline, TimelineRow } from '../../api/index.js';
import { foldRuns, humanDuration } from '../../api/index.js';
import { objectEvents } from './client.js';
import { CopyCommand } from './copy-command.js';
import { EventText } from './event-text.js';
import { clockTime, estimateSpan, interval } from './format.js';
import { useTimeline } from './hooks.js';
import { parseObjectKey, toRow } from './model.js';

/** ObjectPanelProps configure the ObjectPanel. */
export interface ObjectPanelProps {
  objectKey: string;
  /** cluster, when one is picked, keeps that cluster's events of the object and of what it owns. */
  cluster: string;
  now: number;
  onClose: () => void;
}

// Look this far back for an object's incident: what an archive typically keeps.
const HISTORY_MS = 30 * 24 * 3_600_000;
// The incident table shows at most this many rows (runs of repeats folded), the latest; the summary counts them all.
const MAX_ROWS = 200;

function lastTimestamp(e: CoreEvent): number {
  const t = e.lastTimestamp ? Date.parse(e.lastTimestamp) : NaN;
  return Number.isNaN(t) ? -Infinity : t;
}

/** describeOrder sorts as `kubectl describe` does: by lastTimestamp, oldest first, unset first. */
function describeOrder(a: CoreEvent, b: CoreEvent): number {
  return lastTimestamp(a) - lastTimestamp(b);
}

/**
 * ObjectPanel shows one object's events as `kubectl describe` lists them
 * (Type, Reason, Age, From, Message), then its incident as the server's
 * timeline tells it for `Kind/name` (what `kevents timeline --for` prints): the
 * objects it owns (a Deployment's ReplicaSets and Pods, a Pod's Node), every
 * occurrence among them, the first Warning, and the next steps.
 */
export function ObjectPanel({ objectKey, cluster, now, onClose }: ObjectPanelProps) {
  const target = parseObjectKey(objectKey);
  const [events, setEvents] = useState<CoreEvent[] | undefined>(undefined);
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    if (target === undefined) return;
    const abort = new AbortController();
    setError('');
    objectEvents(target.kind, target.namespace, target.name, { cluster, signal: abort.signal }).then(setEvents, (e: unknown) => {
      if (!abort.signal.aborted) setError(e instanceof Error ? e.message : String(e));
    });
    return () => abort.abort();
  }, [objectKey, cluster, refresh]);

  useEffect(() => heading.current?.focus(), [objectKey]);

  useEffect(() => {
    const timer = setInterval(() => setRefresh((n) => n + 1), 5000);
    return () => clearInterval(timer);
  }, []);

  const incident = useTimeline(
    { since: now - HISTORY_MS, until: now + 60_000, namespace: target?.namespace || undefined, for: target ? `${target.kind}/${target.name}` : undefined, cluster: cluster || undefined },
    `${objectKey}|${cluster}|${refresh}`,
  );

  if (target === undefined) return null;
  const rows = [...(events ?? [])].sort(describeOrder).map(toRow);
  const title = `${target.kind}/${target.name}`;
  const timeline = incident.timeline;

  return (
    <div class="panel" role="dialog" aria-modal="false" aria-labelledby="panel-title"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}>
      <header>
        <h2 id="panel-title" tabIndex={-1} ref={heading}>
          <EventText text={target.kind} />/<EventText text={target.name} />
          {target.namespace ? <span class="panel-ns"> in <EventText text={target.namespace} /></span> : null}
          {cluster ? <span class="panel-ns"> of <EventText text={cluster} /></span> : null}
        </h2>
        <button type="button" class="close" aria-label="Close (Escape)" onClick={onClose}>✕</button>
      </header>
      <h3>Events</h3>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {events === undefined && !error ? <p>Loading…</p> : null}
      {events !== undefined && rows.length === 0 ? <p class="none">Events: &lt;none&gt;</p> : null}
      {rows.length > 0 ? (
        <div class="scroll-x">
          <table class="describe">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Reason</th>
                <th scope="col">Age</th>
                <th scope="col">From</th>
                <th scope="col">Message</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.uid} class={r.type === 'Warning' ? 'warning' : ''}>
                  <td><EventText text={r.type} /></td>
                  <td><EventText text={r.reason} /></td>
                  <td class="nowrap">{interval(r, now)}</td>
                  <td><EventText text={r.from} /></td>
                  <td class="message">
                    {r.fieldPath ? <><EventText text={r.fieldPath} />: </> : null}
                    <EventText text={r.message} multiline />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <h3>Incident</h3>
      {timeline === undefined ? (
        incident.phase === 'error' ? <p class="error" role="alert">{incident.message}</p> : <p>Loading…</p>
      ) : (
        <Incident timeline={timeline} title={title} now={now} />
      )}
      <h3>Next steps</h3>
      {timeline === undefined ? null : timeline.hints.length === 0 ? (
        <p class="none">No specific steps for these reasons. Start with <code>kubectl describe</code> of this object.</p>
      ) : (
        <ul class="hints">
          {timeline.hints.map((h) => (
            <li key={h.command}>
              <span class="hint-reason"><EventText text={h.reason} /></span> <EventText text={h.why} />
              <CopyCommand command={h.command} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** RowTime shows a row's time; an estimated one as `~time` with the span the data allows in its title. */
function RowTime({ row, now }: { row: TimelineRow; now: number }) {
  const t = Date.parse(row.time);
  if (!row.estimated) return <time dateTime={row.time}>{clockTime(t, now)}</time>;
  return (
    <time dateTime={row.time} class="estimated" title={`estimated: ${estimateSpan(row.earliest, row.latest, now)}`}>
      ~{clockTime(t, now)}
    </time>
  );
}

/**
 * Incident is the summary and rows of an object's timeline: which objects are
 * in it, the first Warning, and every occurrence, latest rows last, a run of
 * one event's repeats folded into one row (`×14 over 28m`, its first and last
 * times) with the message given the width.
 */
function Incident({ timeline, title, now }: { timeline: Timeline; title: string; now: number }) {
  const { summary } = timeline;
  if (timeline.rows.length === 0) return <p class="none">No events of <EventText text={title} /> or of what it owns in the last 30 days.</p>;
  // A run of one event's repeats is one row, as `kevents timeline` prints it.
  const runs = foldRuns(timeline.rows);
  const shown = runs.slice(-MAX_ROWS);
  const first = summary.firstWarning;
  const others = summary.objects.filter((o) => o.object !== title);
  // Objects of one name in several clusters: each row says whose it is.
  const clustered = new Set(timeline.rows.map((r) => r.cluster ?? '')).size > 1;
  return (
    <div class="incident">
      {summary.cause ? (
        <p class="incident-cause" data-kind={summary.cause.kind}>
          <b><EventText text={summary.cause.text} /></b>
        </p>
      ) : null}
      <p class="incident-summary">
        {summary.occurrences.toLocaleString()} occurrence{summary.occurrences === 1 ? '' : 's'} of {summary.reasons.length} reason
        {summary.reasons.length === 1 ? '' : 's'}
        {others.length > 0 ? (
          <>
            {' '}
            across <EventText text={title} /> and {others.length} object{others.length === 1 ? '' : 's'} it owns or ran on:{' '}
            {others.map((o, i) => (
              <Fragment key={i}>
                {i > 0 ? ', ' : ''}
                <EventText text={o.object} />
              </Fragment>
            ))}
          </>
        ) : null}
        .{summary.estimatedRows > 0 ? ` The time of ${summary.estimatedRows} row${summary.estimatedRows === 1 ? ' is' : 's are'} estimated (~).` : ''}
      </p>
      {first !== null ? (
        <p class="first-warning">
          First warning: {first.estimated ? '~' : ''}
          {clockTime(Date.parse(first.time), now)} <b><EventText text={first.reason} /></b> on <EventText text={first.object} />: <EventText text={first.message} />
        </p>
      ) : null}
      <div class="scroll-x">
        <table class="describe incident-rows">
          {shown.length < runs.length ? (
            <caption>the latest {shown.length.toLocaleString()} of {runs.length.toLocaleString()} rows</caption>
          ) : null}
          <thead>
            <tr>
              <th scope="col">Time</th>
              {clustered ? <th scope="col">Cluster</th> : null}
              <th scope="col">Object</th>
              <th scope="col">Type</th>
              <th scope="col">Reason</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((run, i) => {
              const r = run.first;
              return (
                <tr key={i} class={r.type === 'Warning' ? 'warning' : ''} data-rows={run.rows}>
                  <td class="nowrap">
                    <RowTime row={r} now={now} />
                    {run.rows > 1 ? (
                      <span class="run-end">
                        {'– '}
                        <RowTime row={run.last} now={now} />
                      </span>
                    ) : null}
                  </td>
                  {clustered ? <td class="nowrap"><EventText text={r.cluster ?? ''} /></td> : null}
                  <td class="object"><EventText text={r.object} /></td>
                  <td><EventText text={r.type} /></td>
                  <td><EventText text={r.reason} /></td>
                  <td class="message">
                    <EventText text={r.message} multiline />
                    {run.rows > 1
                      ? ` (×${run.count} over ${humanDuration(Date.parse(run.last.time) - Date.parse(r.time))})`
                      : r.count > 1
                        ? ` (×${r.count})`
                        : ''}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
