/**
 * LabError is an expected failure of a lab command (a missing binary, a lab
 * that is not running): the CLI prints its message on one line and exits 1.
 */
export class LabError extends Error {
  override name = 'LabError';
  readonly userFacing = true;
}
