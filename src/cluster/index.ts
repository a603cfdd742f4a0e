export {
  inClusterConfig,
  inClusterConnection,
  InClusterConnection,
  NotInClusterError,
  SERVICE_ACCOUNT_DIR,
  TOKEN_RECHECK_MS,
  type InClusterConfig,
} from './in-cluster.js';
export { restLeaseClient, type Lease, type LeaseClient } from './lease-client.js';
export {
  createLeaderElector,
  validateLeaderElection,
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  type LeaderElector,
} from './leader-elector.js';
