// The database password of a postgres:// storage URL, given where no process listing shows it: a mounted file
// (--storage-password-file) or the driver's own environment (PGPASSWORD, PGPASSFILE or ~/.pgpass).
import { readFileSync } from 'node:fs';
import { CliError, UsageError } from '../errors.js';
import type { StorageSpec } from './storage.js';

/** STORAGE_PASSWORD_FILE_FLAG is the one name every command that opens a storage URL gives the password file. */
export const STORAGE_PASSWORD_FILE_FLAG = '--storage-password-file';

/** storagePasswordHelp is the help line of --storage-password-file for the command whose URL is `urlFlag`. */
export function storagePasswordHelp(urlFlag: string): string {
  return `read the password of a postgres:// ${urlFlag} from this file (a mounted Secret; one trailing newline is dropped), so that it is in no process listing; PGPASSWORD and PGPASSFILE (~/.pgpass) are read too`;
}

/** StoragePasswordOptions say where a command's URL came from and where its password may be. */
export interface StoragePasswordOptions {
  /** urlFlag names the URL's flag in messages: --storage, --to or --from. */
  urlFlag: string;
  /** file is the value of --storage-password-file, if given. */
  file: string | undefined;
  /** warn writes one line to stderr. */
  warn: (line: string) => void;
}

/**
 * withStoragePassword gives a postgres:// spec the password of
 * --storage-password-file, in the URL the process keeps in memory (never in its
 * argv). A URL that carries a password itself still works, with a warning: its
 * argv shows it to every user of the machine (`ps`, /proc/PID/cmdline) and to
 * anyone who can read the pod's spec.
 */
export function withStoragePassword(spec: StorageSpec, o: StoragePasswordOptions): StorageSpec {
  const file = o.file !== undefined && o.file !== '' ? o.file : undefined;
  if (spec.kind !== 'postgres') {
    if (file !== undefined) throw new UsageError(`${STORAGE_PASSWORD_FILE_FLAG} is the password of a postgres:// ${o.urlFlag}; ${spec.kind} storage takes none`);
    return spec;
  }
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new UsageError(`${o.urlFlag} is not a URL: postgres://USER@HOST:PORT/DB`);
  }
  if (url.password !== '') {
    if (file !== undefined) throw new UsageError(`${o.urlFlag} carries a password and ${STORAGE_PASSWORD_FILE_FLAG} gives another: give it once, in the file`);
    o.warn(`warning: the password in the ${o.urlFlag} URL is visible in process listings; give it with ${SAFER_WAYS} instead`);
    return spec;
  }
  if (file === undefined) return spec;
  const password = readPasswordFile(file);
  // Percent-encoded, as a URL's password is: the driver decodes it, so that any character (@, :, %, /) survives.
  url.password = encodeURIComponent(password);
  return { kind: 'postgres', url: url.toString() };
}

/** SAFER_WAYS names where a password is given out of argv, for every message that asks for one. */
const SAFER_WAYS = `${STORAGE_PASSWORD_FILE_FLAG} FILE, PGPASSWORD or a PGPASSFILE (~/.pgpass) entry`;

/**
 * withPasswordHint adds to a failure to open a PostgreSQL archive how to give
 * the password, when the database asked for one and none was given: the
 * driver's own words for that ("client password must be a string") name no flag.
 */
export function withPasswordHint(message: string): string {
  return /client password must be a string/.test(message) ? `${message} (the database asks for a password: give it with ${SAFER_WAYS})` : message;
}

function readPasswordFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`${STORAGE_PASSWORD_FILE_FLAG}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
  // `echo PASSWORD > file` and most editors end the file with a newline that is no part of the password.
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new CliError(`${STORAGE_PASSWORD_FILE_FLAG}: ${file} is empty`);
  if (/[\r\n]/.test(password)) throw new CliError(`${STORAGE_PASSWORD_FILE_FLAG}: ${file} holds more than one line; it holds the password alone`);
  return password;
}
