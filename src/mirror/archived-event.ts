import { CLUSTER_LABEL, CLUSTER_UID_ANNOTATION, occurrenceChange } from '../api/index.js';
import type { CoreEvent } from '../api/index.js';
import type { ArchiveDecision, ArchiveWrite } from '../storage/index.js';

/** SOURCE_RESOURCE_VERSION_ANNOTATION keeps the source's resourceVersion of the archived version, for deduplication and for readers. */
export const SOURCE_RESOURCE_VERSION_ANNOTATION = 'archive.kevents.io/source-resource-version';
/** SOURCE_NAME_ANNOTATION is set when an event is archived under another name because a different event (another uid) holds its own. */
export const SOURCE_NAME_ANNOTATION = 'archive.kevents.io/source-name';
/** SourceCluster is the identity of the cluster a mirror reads: its name (`--cluster`) and its `kube-system` UID when known. */
export interface SourceCluster {
  cluster?: string | undefined;
  clusterUID?: string | undefined;
}

/**
 * compareResourceVersions orders two resourceVersions of one source. They are
 * opaque to clients in general, but every API server kevents mirrors (etcd
 * revisions, kevents' own counter) uses integers, which order the versions of
 * an object; anything else is only equal or not (NaN).
 */
export function compareResourceVersions(a: string, b: string): number {
  if (a === b) return 0;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return Number.NaN;
}

/**
 * archivedEvent is the archive's copy of a source event: the source's identity
 * (uid, namespace, name, timestamps) and content, its resourceVersion as an
 * annotation, the cluster's name as a label and its UID as an annotation. The
 * source's managedFields are dropped: they describe writes to the source, not the event.
 */
export function archivedEvent(source: CoreEvent, options: SourceCluster & { name?: string }): CoreEvent {
  const { resourceVersion, managedFields: _managed, ...meta } = source.metadata;
  // What the archive says of an event is the archive's alone: a source event's own archive.kevents.io/*
  // keys (anyone who can create an event there can set them) would make it pose as another cluster.
  const labels = withoutArchiveKeys(meta.labels);
  if (labels === undefined) delete meta.labels;
  else meta.labels = labels;
  const annotations: Record<string, string> = { ...withoutArchiveKeys(meta.annotations), [SOURCE_RESOURCE_VERSION_ANNOTATION]: resourceVersion ?? '' };
  if (options.name !== undefined && options.name !== meta.name) annotations[SOURCE_NAME_ANNOTATION] = meta.name ?? '';
  if (options.clusterUID !== undefined && options.clusterUID !== '') annotations[CLUSTER_UID_ANNOTATION] = options.clusterUID;
  const metadata = { ...meta, annotations, ...(options.name !== undefined ? { name: options.name } : {}) };
  if (options.cluster !== undefined && options.cluster !== '') metadata.labels = { ...meta.labels, [CLUSTER_LABEL]: options.cluster };
  return { ...source, kind: 'Event', apiVersion: 'v1', metadata };
}

/** ARCHIVE_KEY_PREFIX is the prefix of the labels and annotations the archive writes itself. */
export const ARCHIVE_KEY_PREFIX = 'archive.kevents.io/';

/** withoutArchiveKeys is a label or annotation map without its archive.kevents.io/* keys (undefined when none are left). */
function withoutArchiveKeys(map: Record<string, string> | undefined): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  const kept = Object.entries(map).filter(([k]) => !k.startsWith(ARCHIVE_KEY_PREFIX));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** alternateNames are where an event goes when another event (a different uid) holds its name in the archive. */
function alternateNames(name: string, uid: string): string[] {
  const compact = uid.replace(/-/g, '').toLowerCase();
  return [`${name}.${compact.slice(0, 8)}`, `${name}.${compact}`];
}

/**
 * archiveWrite is the archive write of one source version: it skips a version
 * the archive already holds (same uid, resourceVersion not newer), moves to an
 * alternate name when another event holds the name, and otherwise stores the
 * new version with an occurrence when it is an observed change.
 */
export function archiveWrite(source: CoreEvent, origin: SourceCluster = {}): ArchiveWrite {
  const namespace = source.metadata.namespace ?? '';
  const name = source.metadata.name ?? '';
  const uid = source.metadata.uid ?? '';
  const rv = source.metadata.resourceVersion ?? '';
  const names = [name, ...alternateNames(name, uid)];
  return {
    namespace,
    name,
    decide(current, at): ArchiveDecision {
      if (current !== undefined && (current.metadata.uid ?? '') !== uid) {
        const next = names[names.indexOf(at) + 1];
        // Every name taken by other events (uid prefixes colliding twice) cannot happen with real uids.
        return next === undefined ? { action: 'skip' } : { action: 'redirect', name: next };
      }
      const archivedRv = current?.metadata.annotations?.[SOURCE_RESOURCE_VERSION_ANNOTATION];
      if (archivedRv !== undefined && compareResourceVersions(rv, archivedRv) <= 0) return { action: 'skip' };
      const object = archivedEvent(source, { ...origin, name: at });
      const change = occurrenceChange(current, object);
      return change === undefined ? { action: 'write', object } : { action: 'write', object, occurrence: change };
    },
  };
}
