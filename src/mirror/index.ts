export {
  createMirror,
  isExpiredError,
  DEFAULT_MAX_BATCH,
  DEFAULT_PAGE_SIZE,
  DEFAULT_WATCH_TIMEOUT_SECONDS,
  type Mirror,
  type MirrorOptions,
  type MirrorSource,
  type ArchivedChange,
  type Readiness,
} from './mirror.js';
export { createMirrorMetrics, type MirrorMetrics } from './mirror-metrics.js';
export {
  archivedEvent,
  archiveWrite,
  compareResourceVersions,
  SOURCE_NAME_ANNOTATION,
  SOURCE_RESOURCE_VERSION_ANNOTATION,
  type SourceCluster,
} from './archived-event.js';
export { startRetention, DEFAULT_RETENTION_INTERVAL_MS, type Retention, type RetentionOptions } from './retention.js';
export { bindSourceCluster, sourceClusterUID, ClusterNameTaken, KUBE_SYSTEM, type NamespaceGetter } from './cluster-identity.js';
