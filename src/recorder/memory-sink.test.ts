import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreEvent } from '../api/index.js';
import { MemoryEventSink } from './memory-sink.js';

const event: CoreEvent = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'web-1.1', namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'web-1' } };

void describe('MemoryEventSink faults', () => {
  void it('holds a call on a pending fault until the caller aborts it', async () => {
    const sink = new MemoryEventSink();
    sink.fault = () => new Promise(() => {});
    const controller = new AbortController();
    const call = sink.coreV1.create('default', event, { signal: controller.signal });
    controller.abort(new Error('deadline'));
    await assert.rejects(call, /deadline/);
    assert.equal(sink.coreV1.objects.size, 0);
  });

  void it('rejects at once when the fault itself aborts the signal and never settles', async () => {
    const sink = new MemoryEventSink();
    const controller = new AbortController();
    sink.fault = () => {
      controller.abort(new Error('aborted while held'));
      return new Promise(() => {});
    };
    await assert.rejects(sink.coreV1.create('default', event, { signal: controller.signal }), /aborted while held/);
  });

  void it('applies the call once a held fault resolves', async () => {
    const sink = new MemoryEventSink();
    sink.fault = () => Promise.resolve();
    const stored = await sink.coreV1.create('default', event);
    assert.equal(stored.metadata.resourceVersion, '1');
    assert.deepEqual(sink.summary(), ['create default/web-1.1']);
  });
});
