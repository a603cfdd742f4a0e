import https from 'node:https';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { isStatusError, reasonOf } from '../api/index.js';
import { RestClient, TokenConnection } from '../client/index.js';

/** LabApi reads and writes the lab's API server as the learner (system:masters). */
export interface LabApi {
  /** get reads a path, which may carry a query (`/api/v1/pods?labelSelector=…`). */
  get<T>(path: string): Promise<T>;
  /** getOrUndefined is get, with undefined for a 404. */
  getOrUndefined<T>(path: string): Promise<T | undefined>;
  /** create POSTs an object; one that already exists is left as it is. */
  create(path: string, body: unknown): Promise<void>;
  /** probe GETs a non-JSON endpoint (/readyz) and gives its status code, 0 when nothing answers. */
  probe(path: string): Promise<number>;
  close(): void;
}

/** createLabApi connects to the lab's API server with its CA and a token. */
export function createLabApi(options: { server: string; caFile: string; token: string }): LabApi {
  const ca = readFileSync(options.caFile);
  const connection = new TokenConnection({ server: options.server, ca, token: options.token });
  const rest = new RestClient(connection, { timeoutMs: 10_000, userAgent: 'kevents-lab' });
  const get = <T>(target: string): Promise<T> => {
    const [path = target, query] = target.split('?', 2);
    return rest.request<T>({ method: 'GET', path, ...(query !== undefined ? { query: new URLSearchParams(query) } : {}), verb: `get ${path}` });
  };
  return {
    get,
    async getOrUndefined<T>(path: string) {
      try {
        return await get<T>(path);
      } catch (e) {
        if (isStatusError(e) && e.status.code === 404) return undefined;
        throw e;
      }
    },
    async create(path, body) {
      try {
        await rest.request({ method: 'POST', path, body, verb: `create ${path}` });
      } catch (e) {
        if (reasonOf(e) !== 'AlreadyExists') throw e;
      }
    },
    probe(path) {
      return new Promise((resolve) => {
        const req = https.get(new URL(path, options.server), { ca, headers: { Authorization: `Bearer ${options.token}` }, timeout: 2_000 }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve(0));
      });
    },
    close() {
      connection.close();
    },
  };
}

/** freePorts finds n loopback ports that nothing listens on right now. */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => resolve(s));
    })),
  );
  const ports = servers.map((s) => {
    const a = s.address();
    return typeof a === 'object' && a !== null ? a.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** httpStatus GETs a plain-HTTP URL (etcd's /health, the archive's /readyz) and gives its status, 0 when nothing answers. */
export async function httpStatus(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}
