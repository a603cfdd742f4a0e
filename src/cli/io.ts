// The streams a command writes to, passed in by the shell (run.ts): below every command, which all take one.
/** CliIO carries the streams and environment a command uses (injected for tests). */
export interface CliIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}
