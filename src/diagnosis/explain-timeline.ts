import type { TimelineCause } from '../api/index.js';
import type { TimelineInput } from '../timeline/index.js';
import { buildIncidents } from './incidents.js';

/**
 * explainTimeline is the timeline's TimelineExplainer: the incidents of its
 * input, and of those the one about its object (its root, or an object it
 * joins), else, for a namespace's timeline, the most recent. Null when the
 * events show no failure.
 */
export function explainTimeline(input: TimelineInput): TimelineCause | null {
  const { incidents } = buildIncidents({ events: input.events, occurrences: input.occurrences, owners: input.owners, since: input.since, until: input.until });
  const key = input.for === undefined ? undefined : `${input.for.kind}/${input.for.name}`;
  const namespace = input.for?.namespace ?? '';
  const found =
    key === undefined
      ? incidents[0]
      : (incidents.find((i) => i.root === key && (i.namespace === namespace || i.namespace === '')) ??
        incidents.find((i) => i.objects.includes(key) && (i.namespace === namespace || i.namespace === '')));
  return found === undefined ? null : { kind: found.kind, text: found.cause, root: found.root };
}
