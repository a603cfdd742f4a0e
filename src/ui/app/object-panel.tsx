import { useEffect, useRef, useState } from 'preact/hooks';
import type { CoreEvent } from '../../api/types.js';
import { objectEvents } from './client.js';
import { clockTime, interval } from './format.js';
import { useOccurrences } from './hooks.js';
import { hintsFor } from './hints.js';
import { parseObjectKey, toRow } from './model.js';

/** ObjectPanelProps configure the ObjectPanel. */
export interface ObjectPanelProps {
  objectKey: string;
  now: number;
  onClose: () => void;
}

// Look this far back for an object's archived occurrences.
const HISTORY_MS = 30 * 24 * 3_600_000;

function lastTimestamp(e: CoreEvent): number {
  const t = e.lastTimestamp ? Date.parse(e.lastTimestamp) : NaN;
  return Number.isNaN(t) ? -Infinity : t;
}

/** describeOrder sorts as `kubectl describe` does: by lastTimestamp, oldest first, unset first. */
function describeOrder(a: CoreEvent, b: CoreEvent): number {
  return lastTimestamp(a) - lastTimestamp(b);
}

function nodeOf(events: readonly CoreEvent[]): string | undefined {
  for (const e of events) {
    const m = /^Successfully assigned \S+ to (\S+)$/.exec(e.message ?? '');
    if (m) return m[1];
    if (e.source?.host) return e.source.host;
  }
  return undefined;
}

/**
 * ObjectPanel shows one object's events as `kubectl describe` lists them
 * (Type, Reason, Age, From, Message), its archived occurrences when the server
 * keeps them, and next steps for the reasons it has seen.
 */
export function ObjectPanel({ objectKey, now, onClose }: ObjectPanelProps) {
  const target = parseObjectKey(objectKey);
  const [events, setEvents] = useState<CoreEvent[] | undefined>(undefined);
  const [error, setError] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    if (target === undefined) return;
    const abort = new AbortController();
    setError('');
    objectEvents(target.kind, target.namespace, target.name, abort.signal).then(setEvents, (e: unknown) => {
      if (!abort.signal.aborted) setError(e instanceof Error ? e.message : String(e));
    });
    return () => abort.abort();
  }, [objectKey, refresh]);

  useEffect(() => heading.current?.focus(), [objectKey]);

  useEffect(() => {
    const timer = setInterval(() => setRefresh((n) => n + 1), 5000);
    return () => clearInterval(timer);
  }, []);

  const fs = target ? `regarding.kind=${target.kind},regarding.name=${target.name}` : '';
  const archive = useOccurrences(
    { since: now - HISTORY_MS, until: now + 60_000, namespace: target?.namespace || undefined, fieldSelector: fs, max: 2000 },
    `${objectKey}|${refresh}`,
  );

  if (target === undefined) return null;
  const rows = [...(events ?? [])].sort(describeOrder).map(toRow);
  const reasons = [...rows].reverse().map((r) => r.reason);
  const hints = hintsFor({ ...target, node: nodeOf(events ?? []) }, reasons);
  const title = `${target.kind}/${target.name}`;

  return (
    <div class="panel" role="dialog" aria-modal="false" aria-labelledby="panel-title"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}>
      <header>
        <h2 id="panel-title" tabIndex={-1} ref={heading}>
          {title}
          {target.namespace ? <span class="panel-ns"> in {target.namespace}</span> : null}
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
                  <td>{r.type}</td>
                  <td>{r.reason}</td>
                  <td class="nowrap">{interval(r, now)}</td>
                  <td>{r.from}</td>
                  <td class="message">{r.fieldPath ? `${r.fieldPath}: ${r.message}` : r.message}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {archive.phase === 'ok' && archive.result.items.length > 0 ? (
        <details>
          <summary>Every occurrence ({archive.result.items.length.toLocaleString()}, from the archive)</summary>
          <ol class="occurrences">
            {archive.result.items.map((o) => (
              <li key={o.metadata.name}>
                <time dateTime={o.lastSeen ?? undefined}>{clockTime(Date.parse(o.lastSeen ?? ''), now)}</time> {o.type} {o.reason} ×{o.countBefore}→{o.countAfter}: {o.message}
              </li>
            ))}
          </ol>
        </details>
      ) : null}
      <h3>Next steps</h3>
      {hints.length === 0 ? (
        <p class="none">No specific steps for these reasons. Start with <code>kubectl describe {title.toLowerCase()}{target.namespace ? ` -n ${target.namespace}` : ''}</code>.</p>
      ) : (
        <ul class="hints">
          {hints.map((h) => (
            <li key={h.command}>
              <span class="hint-reason">{h.reason}</span> {h.why}
              <div class="cmd">
                <code>{h.command}</code>
                <button type="button" class="copy" aria-label={`Copy: ${h.command}`} onClick={() => void navigator.clipboard?.writeText(h.command)}>
                  Copy
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
