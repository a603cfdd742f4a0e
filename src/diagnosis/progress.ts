import type { CoreEvent } from '../api/index.js';
import { eventCluster, eventLastMs } from '../api/index.js';
import type { TimelineSource } from '../timeline/index.js';
import { classify, eventContainer } from './catalogue.js';
import type { FailureMatch } from './kind.js';

/**
 * Progress: a failing step that a pod later got past is resolved, not
 * ongoing. The kubelet mounts a pod's volumes before it pulls its images
 * (pkg/kubelet/kubelet.go SyncPod waits for volumes, then the runtime's
 * `Pulling`/`Pulled`, `Created`, `Started`), the scheduler's `Scheduled`
 * follows the FailedScheduling it ends, and a `Pulled` (or the container's
 * `Created`/`Started`) ends the pull errors of that image.
 */

/** PROGRESS_REASONS are the Normal reasons that show a pod got past a step. */
export const PROGRESS_REASONS: readonly string[] = ['Scheduled', 'SuccessfulAttachVolume', 'Pulling', 'Pulled', 'Created', 'Started'];

/** IMAGE_KIND_IDS are the kinds a pull error shows. */
const IMAGE_KIND_IDS = new Set(['image-pull-denied', 'image-not-found', 'image-registry-unreachable', 'image-invalid', 'image-pull-backoff']);

/** resolvedBy is the progress reasons that end a failure, undefined for a failure progress does not end (a crash loop starts its container again and again). */
export function resolvedBy(e: CoreEvent, m: FailureMatch): readonly string[] | undefined {
  if (e.involvedObject.kind !== 'Pod') return undefined;
  if (e.reason === 'FailedScheduling') return ['Scheduled'];
  if (e.reason === 'FailedMount') return ['Pulling', 'Pulled', 'Created', 'Started'];
  if (e.reason === 'FailedAttachVolume') return ['SuccessfulAttachVolume', 'Pulling', 'Pulled', 'Created', 'Started'];
  if (IMAGE_KIND_IDS.has(m.kind.id)) return ['Pulled', 'Created', 'Started'];
  return undefined;
}

interface Step {
  reason: string;
  ms: number;
  container: string | undefined;
  image: string | undefined;
}

/** Progress answers whether a pod's failure was followed by progress. */
export interface Progress {
  /** resolved says whether `e` (matched as `m`, last seen at `lastMs`) was followed by progress of its pod that ends it. */
  resolved(e: CoreEvent, m: FailureMatch, lastMs: number): boolean;
}

function podKey(e: CoreEvent): string {
  return `${eventCluster(e)}\u0000${e.involvedObject.namespace ?? e.metadata.namespace ?? ''}\u0000${e.involvedObject.name ?? ''}`;
}

/** indexProgress indexes the progress events among `events` that happened before `until` (Unix ms, exclusive; undefined: any time). */
export function indexProgress(events: readonly CoreEvent[], until: number | undefined): Progress {
  const byPod = new Map<string, Step[]>();
  for (const e of events) {
    if (e.involvedObject.kind !== 'Pod' || !PROGRESS_REASONS.includes(e.reason ?? '')) continue;
    const ms = eventLastMs(e);
    if (ms === undefined || (until !== undefined && ms >= until)) continue;
    const step: Step = { reason: e.reason!, ms, container: eventContainer(e), image: /image "([^"]*)"/.exec(e.message ?? '')?.[1] };
    const list = byPod.get(podKey(e));
    if (list === undefined) byPod.set(podKey(e), [step]);
    else list.push(step);
  }
  return {
    resolved(e, m, lastMs) {
      const reasons = resolvedBy(e, m);
      if (reasons === undefined) return false;
      const container = eventContainer(e);
      const image = m.facts.image;
      return (byPod.get(podKey(e)) ?? []).some(
        (p) =>
          reasons.includes(p.reason) &&
          p.ms >= lastMs &&
          // Another container's progress does not end this one's failure; a step that does not say which is the pod's.
          (p.container === undefined || container === undefined || p.container === container) &&
          (p.image === undefined || image === undefined || p.image === image),
      );
    },
  };
}

/**
 * progressOfFailingPods reads, within the window, the progress events of just
 * the pods whose failure progress may end (`resolvedBy`): one read per pod,
 * through the store's index of involved names, so the window's other Normal
 * events stay unread.
 */
export async function progressOfFailingPods(
  source: TimelineSource,
  events: readonly CoreEvent[],
  since: number | undefined,
  until: number | undefined,
  match: (e: CoreEvent) => FailureMatch | undefined = classify,
): Promise<CoreEvent[]> {
  const pods = new Map<string, { namespace: string; name: string }>();
  for (const e of events) {
    const m = match(e);
    if (m === undefined || resolvedBy(e, m) === undefined) continue;
    const namespace = e.involvedObject.namespace ?? e.metadata.namespace ?? '';
    const name = e.involvedObject.name ?? '';
    pods.set(`${namespace}\u0000${name}`, { namespace, name });
  }
  let out: CoreEvent[] = [];
  for (const pod of pods.values()) {
    const read = await source.listEvents({ namespace: pod.namespace, kind: 'Pod', name: pod.name, since, until, inWindowOnly: true, anyOf: { reasons: [...PROGRESS_REASONS] } });
    // A source may return more than it selects; the failures are already in hand.
    out = out.concat(read.filter((e) => PROGRESS_REASONS.includes(e.reason ?? '')));
  }
  return out;
}
