import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CollectingLogger } from '../../internal/index.js';
import { isSinkRejected } from '../types.js';
import type { ExportRecord } from '../types.js';
import { postBody } from './http-post.js';
import { slackSinkType } from './slack-sink.js';
import { webhookSinkType } from './webhook-sink.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const RECORD = {
  id: 'r1',
  documentId: 'd1',
  version: 1,
  policy: 'upsert',
  payload: { message: 'x' },
  fields: { regarding: { kind: 'Pod', namespace: 'prod', name: 'web' }, type: 'Warning', reason: 'BackOff', message: 'x', count: 1, cluster: '', reportingController: 'kubelet', lastSeen: '2025-01-01T00:00:00Z' },
} as unknown as ExportRecord;

void describe('HTTP sinks and redirects', () => {
  const seenByTarget: Seen[] = [];
  let target: { server: Server; origin: string };
  let redirector: { server: Server; origin: string };
  before(async () => {
    // The address a redirect points at: another port, as another host would be.
    target = await serve((req, res) => {
      seenByTarget.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      req.resume();
      res.writeHead(200).end('ok');
    });
    redirector = await serve((req, res) => {
      req.resume();
      const status = Number(/\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 307);
      res.writeHead(status, { Location: `${target.origin}/stolen${req.url ?? ''}` }).end();
    });
  });
  after(async () => {
    for (const s of [target.server, redirector.server]) await new Promise((resolve) => s.close(resolve));
  });

  for (const status of [301, 302, 303, 307, 308]) {
    void it(`does not follow a ${status} with its credentials and headers, and refuses the records saying where it pointed`, async () => {
      const before = seenByTarget.length;
      const err = await postBody(`${redirector.origin}/${status}`, '{"records":[]}', {
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y', 'X-Scope-OrgID': 'tenant-a' },
        signal: new AbortController().signal,
        timeoutMs: 10_000,
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isSinkRejected(err), String(err));
      assert.match((err as Error).message, new RegExp(`: ${status} .*a redirect to ${target.origin.replace(/\./g, '\\.')}/stolen/.*not followed`));
      assert.equal(seenByTarget.length, before, 'the redirect target got no request');
    });
  }

  void it('the webhook (token, signature, custom header) and Slack sinks send nothing past a redirect', async () => {
    const before = seenByTarget.length;
    const env = { HOOK_SECRET: 'hmac-secret' };
    const webhook = webhookSinkType.create(
      { url: `${redirector.origin}/308`, format: 'json', headers: { Authorization: 'Bearer s3cret', 'X-Team-Token': 't0ken' }, timeoutMs: 10_000, source: 'kevents', secretEnv: 'HOOK_SECRET' },
      { logger: new CollectingLogger(), env },
    );
    const slack = slackSinkType.create({ url: `${redirector.origin}/307/services/T000/B000/XXXX`, timeoutMs: 10_000 }, { logger: new CollectingLogger(), env });
    for (const sink of [webhook, slack]) {
      const err = await sink.send([RECORD], new AbortController().signal).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isSinkRejected(err), String(err));
      await sink.close();
    }
    assert.deepEqual(seenByTarget.slice(before), []);
  });

  void it('still delivers to a URL that answers without a redirect', async () => {
    const before = seenByTarget.length;
    assert.equal(await postBody(`${target.origin}/direct`, '{}', { headers: { Authorization: 'Bearer s3cret' }, signal: new AbortController().signal, timeoutMs: 10_000 }), 'ok');
    assert.equal(seenByTarget.length, before + 1);
    assert.equal(seenByTarget.at(-1)?.headers.authorization, 'Bearer s3cret');
  });
});
