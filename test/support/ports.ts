import { createServer } from 'node:net';
import type { Server } from 'node:net';

/** freePorts finds n ports on 127.0.0.1 that nothing listens on right now. */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = createServer();
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(0, '127.0.0.1', resolve);
      });
      servers.push(s);
    }
    return servers.map((s) => {
      const a = s.address();
      if (a === null || typeof a === 'string') throw new Error('no port');
      return a.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}
