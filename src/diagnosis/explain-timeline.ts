import type { Incident, TimelineHint } from '../api/index.js';
import { scopeObjects } from '../timeline/index.js';
import type { TimelineExplanation, TimelineInput } from '../timeline/index.js';
import { buildIncidents } from './incidents.js';

/**
 * explainTimeline is the timeline's TimelineExplainer, so that a timeline and
 * `kevents incidents` say one thing: the incidents of its input give the cause
 * (the one about its object: its root, or an object it joins; for a
 * namespace's timeline, its only incident, else each incident's in `causes`
 * and none for all) and the next steps (the cause's
 * incident first, then each other incident that touches the timeline's
 * objects or the nodes its pods ran on, each failure kind once, each command
 * once), and the objects the cause's incident takes in, whose events the
 * timeline of its root shows beside its own (a StatefulSet's claim).
 */
export function explainTimeline(input: TimelineInput): TimelineExplanation {
  const { incidents } = buildIncidents({ events: input.events, occurrences: input.occurrences, owners: input.owners, since: input.since, until: input.until });
  const key = input.for === undefined ? undefined : `${input.for.kind}/${input.for.name}`;
  const namespace = input.for?.namespace ?? '';
  const here = (i: Incident): boolean => i.namespace === namespace || i.namespace === '';
  const found =
    key === undefined
      ? incidents.length === 1
        ? incidents[0]
        : undefined
      : (incidents.find((i) => i.root === key && here(i)) ?? incidents.find((i) => i.objects.includes(key) && here(i)));
  let about = incidents;
  if (input.for !== undefined) {
    const scope = scopeObjects(input.for, input.events, input.owners);
    const objects = new Set([...scope.objects, ...scope.nodes.map((n) => `Node/${n}`)]);
    about = incidents.filter((i) => here(i) && (i.root === key || objects.has(i.root) || i.objects.some((o) => objects.has(o))));
  }
  const ordered = found === undefined ? about : [found, ...about.filter((i) => i !== found)];
  // The timeline of an incident's root shows every object its cause takes in (a claim joined to its StatefulSet's pods).
  const objects = found !== undefined && found.root === key && found.namespace === namespace ? found.objects.filter((o) => o !== key) : undefined;
  const causes = key === undefined && incidents.length > 1 ? incidents.map((i) => ({ kind: i.kind, text: i.cause, root: i.root, namespace: i.namespace })) : undefined;
  return { cause: found === undefined ? null : { kind: found.kind, text: found.cause, root: found.root }, causes, objects, hints: timelineHints(ordered) };
}

/** timelineHints are the incidents' steps in order, each failure kind's once and each command once, with the reason of the event that showed it. */
function timelineHints(incidents: readonly Incident[]): TimelineHint[] {
  const out: TimelineHint[] = [];
  const kinds = new Set<string>();
  const commands = new Set<string>();
  for (const i of incidents) {
    // Pods with no common owner failing the same way are one incident each: one set of steps, as for one.
    if (kinds.has(i.kind)) continue;
    kinds.add(i.kind);
    for (const h of i.hints) {
      if (commands.has(h.command)) continue;
      commands.add(h.command);
      out.push({ reason: i.facts.reason ?? i.kind, command: h.command, why: h.why });
    }
  }
  return out;
}
