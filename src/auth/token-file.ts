import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from '../internal/index.js';
import { parseCsv } from './csv.js';
import { watchFiles } from './file-watch.js';
import type { FileWatch } from './file-watch.js';
import { withAuthenticatedGroup } from './user.js';
import type { Authenticator, UserInfo } from './user.js';

/**
 * parseTokenFile reads kube-apiserver's `--token-auth-file` format: one CSV
 * record per token, `token,user,uid[,"group1,group2"]`. As upstream, a record
 * needs at least three columns, an empty token is skipped and a repeated token
 * keeps its last record; `warn` hears about both.
 */
export function parseTokenFile(text: string, path: string, warn: (msg: string) => void = () => {}): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  let records;
  try {
    records = parseCsv(text);
  } catch (e) {
    throw new Error(`token file '${path}': ${(e as Error).message}`, { cause: e });
  }
  let recordNum = 0;
  for (const { fields } of records) {
    if (fields.length < 3) {
      throw new Error(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${fields.length}`);
    }
    recordNum++;
    const [token = '', username = '', uid = '', groups] = fields;
    if (token === '') {
      warn(`empty token has been found in token file '${path}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(token)) warn(`duplicate token has been found in token file '${path}', record number '${recordNum}'`);
    tokens.set(token, withAuthenticatedGroup({ username, uid, groups: groups === undefined ? [] : groups.split(',') }));
  }
  return tokens;
}

/** TokenFileAuthenticator is an Authenticator over a token file, reloaded when the file changes. */
export interface TokenFileAuthenticator extends Authenticator {
  /** size is the number of tokens loaded. */
  readonly size: number;
  close(): void;
}

/**
 * createTokenFileAuthenticator loads a token file (throwing if it cannot be read
 * or parsed, so a bad file stops `kevents serve` from starting) and reloads it
 * when it changes; a reload that fails keeps the tokens already loaded.
 */
export function createTokenFileAuthenticator(options: { path: string; logger: Logger; reloadIntervalMs?: number }): TokenFileAuthenticator {
  const { path, logger } = options;
  const warn = (msg: string): void => logger.warn(msg);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read token file '${path}': ${(e as Error).message}`, { cause: e });
  }
  let tokens = parseTokenFile(text, path, warn);
  const watch: FileWatch = watchFiles({
    paths: [path],
    logger,
    ...(options.reloadIntervalMs !== undefined ? { intervalMs: options.reloadIntervalMs } : {}),
    async onChange() {
      tokens = parseTokenFile(await readFile(path, 'utf8'), path, warn);
      logger.info('token file reloaded', { path, tokens: tokens.size });
    },
  });
  return {
    get size() {
      return tokens.size;
    },
    authenticateToken: (token) => tokens.get(token),
    close: () => watch.close(),
  };
}
