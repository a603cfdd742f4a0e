import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newForbidden, newNotFound } from '../api/index.js';
import type { Logger } from '../internal/index.js';
import { MemoryEventStore } from '../storage/memory/index.js';
import { ClusterNameTaken, bindSourceCluster, sourceClusterUID } from './index.js';
import type { NamespaceGetter } from './index.js';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { lines, error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}

function answering(answer: () => unknown): NamespaceGetter & { paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    // eslint-disable-next-line @typescript-eslint/require-await -- an async answer turns what `answer` throws into a rejection
    async request<T>(req: { path: string }): Promise<T> {
      paths.push(req.path);
      return answer() as T;
    },
  };
}

void describe('sourceClusterUID', () => {
  void it('reads the kube-system namespace UID', async () => {
    const rest = answering(() => ({ metadata: { name: 'kube-system', uid: 'u-1' } }));
    assert.equal(await sourceClusterUID(rest), 'u-1');
    assert.deepEqual(rest.paths, ['/api/v1/namespaces/kube-system']);
  });
  void it('is undefined for a source without namespaces (404)', async () => {
    assert.equal(await sourceClusterUID(answering(() => { throw newNotFound({ group: '', resource: 'namespaces' }, 'kube-system'); })), undefined);
  });
  void it('throws what else the source answers (403: RBAC without get on kube-system)', async () => {
    await assert.rejects(sourceClusterUID(answering(() => { throw newForbidden({ user: 'mirror', verb: 'get', resourceRequest: true, path: '', apiGroup: '', resource: 'namespaces', subresource: '', namespace: '', name: 'kube-system' }); })), /namespaces "kube-system" is forbidden/);
  });
});

void describe('bindSourceCluster', () => {
  void it('binds a new name, accepts it again, refuses it for another UID with one line, and reports a UID under a new name', async () => {
    const store = new MemoryEventStore();
    const logger = recordingLogger();
    try {
      await bindSourceCluster(store, { name: 'prod', uid: 'u-1' }, logger);
      await bindSourceCluster(store, { name: 'prod', uid: 'u-1' }, logger);
      assert.deepEqual(logger.lines, []);
      const refused = await bindSourceCluster(store, { name: 'prod', uid: 'u-2' }, logger).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof ClusterNameTaken);
      assert.match(refused.message, /^cluster name "prod" is bound to another cluster in this archive \(kube-system UID u-1, this source's is u-2\)/);
      assert.ok(!refused.message.includes('\n'));
      await bindSourceCluster(store, { name: 'prod-eu', uid: 'u-1' }, logger);
      assert.equal(logger.lines.length, 1);
      assert.match(logger.lines[0]!, /^warn .*already archived under another name.*"otherNames":\["prod"\]/);
    } finally {
      await store.close();
    }
  });
});
