import type { ConfigReader } from '../config-reader.js';

/** HttpAuthOptions are the credentials an HTTP sink sends: basic auth or a bearer token, each secret named by an environment variable. */
export interface HttpAuthOptions {
  username?: string;
  passwordEnv?: string;
  tokenEnv?: string;
}

/** HTTP_AUTH_FIELDS are the config fields readHttpAuth reads. */
export const HTTP_AUTH_FIELDS = ['username', 'passwordEnv', 'tokenEnv'] as const;

/** readHttpAuth checks a sink's `username` + `passwordEnv` or `tokenEnv` (never both kinds) and copies the given ones onto o. */
export function readHttpAuth(r: ConfigReader, path: (string | number)[], raw: Record<string, unknown>, o: HttpAuthOptions): void {
  const p = (k: string): (string | number)[] => [...path, k];
  const username = r.string(p('username'), raw.username);
  const passwordEnv = r.string(p('passwordEnv'), raw.passwordEnv);
  const tokenEnv = r.string(p('tokenEnv'), raw.tokenEnv);
  if (username !== undefined) o.username = username;
  if (passwordEnv !== undefined) o.passwordEnv = passwordEnv;
  if (tokenEnv !== undefined) o.tokenEnv = tokenEnv;
  if ((username === undefined) !== (passwordEnv === undefined)) r.fail(p(username === undefined ? 'passwordEnv' : 'username'), 'basic auth needs both username and passwordEnv');
  if (tokenEnv !== undefined && username !== undefined) r.fail(p('tokenEnv'), 'give basic auth (username, passwordEnv) or a bearer token (tokenEnv), not both');
}

/**
 * authorization is the Authorization header value of the options, read from the environment when
 * the sink is made (a missing variable fails the start, not every delivery), or undefined.
 */
export function authorization(o: HttpAuthOptions, env: Record<string, string | undefined>): string | undefined {
  const secret = (name: string): string => {
    const v = env[name];
    if (v === undefined || v === '') throw new Error(`the environment variable ${name} is not set`);
    return v;
  };
  if (o.username !== undefined && o.passwordEnv !== undefined) return `Basic ${Buffer.from(`${o.username}:${secret(o.passwordEnv)}`).toString('base64')}`;
  if (o.tokenEnv !== undefined) return `Bearer ${secret(o.tokenEnv)}`;
  return undefined;
}
