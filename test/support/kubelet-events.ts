/** kubeletEvent is a core/v1 Warning as the kubelet writes it about a pod, at a count (its repeats so far). */
export function kubeletEvent(o: { namespace: string; name: string; pod: string; count: number; reason?: string; message?: string }): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: o.name, namespace: o.namespace },
    involvedObject: { kind: 'Pod', namespace: o.namespace, name: o.pod, apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
    reason: o.reason ?? 'BackOff',
    message: o.message ?? 'Back-off restarting failed container app',
    type: 'Warning',
    source: { component: 'kubelet', host: 'node-1' },
    count: o.count,
    firstTimestamp: now,
    lastTimestamp: now,
  };
}
