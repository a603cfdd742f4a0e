import { useMemo } from 'preact/hooks';
import { escapeTerminalLine, hasControlCharacter } from '../../api/index.js';
import type { EventCache } from './event-cache.js';
import { EMPTY_FILTERS, isFiltered } from './model.js';
import type { Filters } from './model.js';
import type { Navigate } from './use-route.js';

/** FilterBarProps configure the FilterBar. */
export interface FilterBarProps {
  cache: EventCache;
  filters: Filters;
  navigate: Navigate;
  /** lockType shows the type filter fixed (the warnings dashboard only counts warnings). */
  lockType?: string;
}

// Suggestion lists are capped: a datalist of thousands helps nobody.
const MAX_SUGGESTIONS = 300;

// A suggestion is drawn by the browser's own list, which can neither isolate nor mark a control: one that holds any is left out.
function sorted(set: Set<string>): string[] {
  set.delete('');
  return [...set].filter((v) => !hasControlCharacter(v)).sort().slice(0, MAX_SUGGESTIONS);
}

/**
 * FilterBar edits the filters shared by every view: the cluster (where the
 * archive holds several), namespace, kind, type, reason and free text. Each
 * change replaces the URL, so the link stays current.
 */
export function FilterBar({ cache, filters, navigate, lockType }: FilterBarProps) {
  // Suggestions are recomputed per thousand changes, not per event.
  const bucket = Math.floor(cache.changes / 1000);
  const facets = useMemo(() => {
    const namespaces = new Set<string>();
    const kinds = new Set<string>();
    const reasons = new Set<string>();
    for (const r of cache.rows) {
      namespaces.add(r.namespace);
      kinds.add(r.kind);
      reasons.add(r.reason);
    }
    return { namespaces: sorted(namespaces), kinds: sorted(kinds), reasons: sorted(reasons) };
  }, [bucket, cache.rows.length > 0]);
  const set = (patch: Partial<Filters>) => navigate({ filters: { ...filters, ...patch } });
  return (
    <form class="filters" role="search" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
      <ClusterPicker clusters={cache.clusters} value={filters.cluster} onPick={(cluster) => set({ cluster })} />
      <label>
        <span>Namespace</span>
        <input name="namespace" list="dl-ns" value={filters.namespace} placeholder="all" autocomplete="off" spellcheck={false}
          onInput={(e) => set({ namespace: e.currentTarget.value })} />
      </label>
      <label>
        <span>Kind</span>
        <input name="kind" list="dl-kind" value={filters.kind} placeholder="all" autocomplete="off" spellcheck={false}
          onInput={(e) => set({ kind: e.currentTarget.value })} />
      </label>
      <label>
        <span>Type</span>
        <select name="type" value={lockType ?? filters.type} disabled={lockType !== undefined}
          onChange={(e) => set({ type: e.currentTarget.value })}>
          <option value="">all</option>
          <option value="Normal">Normal</option>
          <option value="Warning">Warning</option>
        </select>
      </label>
      <label>
        <span>Reason</span>
        <input name="reason" list="dl-reason" value={filters.reason} placeholder="all" autocomplete="off" spellcheck={false}
          onInput={(e) => set({ reason: e.currentTarget.value })} />
      </label>
      <label class="grow">
        <span>Search</span>
        <input id="search" name="q" type="search" value={filters.q} placeholder="text in message, object, reason… ( / )" autocomplete="off"
          spellcheck={false} onInput={(e) => set({ q: e.currentTarget.value })} />
      </label>
      {isFiltered(filters) ? (
        <button type="button" class="clear" onClick={() => navigate({ filters: EMPTY_FILTERS })}>
          Clear
        </button>
      ) : null}
      <datalist id="dl-ns">{facets.namespaces.map((v) => <option key={v} value={v} />)}</datalist>
      <datalist id="dl-kind">{facets.kinds.map((v) => <option key={v} value={v} />)}</datalist>
      <datalist id="dl-reason">{facets.reasons.map((v) => <option key={v} value={v} />)}</datalist>
    </form>
  );
}

/**
 * ClusterPicker keeps one cluster of an archive of several. With one cluster
 * (or none named) there is nothing to pick and it is not drawn, unless a link
 * names a cluster, which it then shows so that it can be cleared.
 */
function ClusterPicker({ clusters, value, onPick }: { clusters: readonly string[]; value: string; onPick: (cluster: string) => void }) {
  if (clusters.length < 2 && value === '') return null;
  const choices = value === '' || clusters.includes(value) ? clusters : [...clusters, value];
  return (
    <label>
      <span>Cluster</span>
      <select name="cluster" value={value} onChange={(e) => onPick(e.currentTarget.value)}>
        <option value="">all</option>
        {choices.map((c) => (
          <option key={c} value={c}>{escapeTerminalLine(c)}</option>
        ))}
      </select>
    </label>
  );
}
