export {
  inClusterConfig,
  inClusterConnection,
  InClusterConnection,
  NotInClusterError,
  SERVICE_ACCOUNT_DIR,
  TOKEN_RECHECK_MS,
  type InClusterConfig,
} from './in-cluster.js';
