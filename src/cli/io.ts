// The streams a command writes to, passed in by the shell (run.ts): below every command, which all take one.
/** CliIO carries the streams and environment a command uses (injected for tests). */
export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /**
   * archiveEvents reads events from the archive's `events.archive.kevents.io` rather than core/v1 (`kubectl kevents`:
   * the cluster's kubeconfig reaches the archive through the aggregation layer, where `/api/v1/events` is the cluster's own).
   */
  archiveEvents?: boolean;
}
