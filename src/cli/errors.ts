/** UsageError is a mistake in how a command was called: exit 2 with the usage hint. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** CliError is an expected failure with a one-line message (exit 1). */
export class CliError extends Error {
  override name = 'CliError';
  readonly userFacing = true;
}
