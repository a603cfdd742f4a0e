/**
 * FUZZ_REGRESSIONS are inputs that once failed a fuzz property (by target
 * name), replayed before every generated run so the fix stays in place.
 */
export const FUZZ_REGRESSIONS: Record<string, unknown[]> = {
  // A NUL resourceVersion on create was refused with a 500; kube-apiserver creates the event (it is not a version).
  'core/v1 event bodies (POST, PUT)': [
    [{ text: JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'rv-nul', namespace: 'fuzz', resourceVersion: '\u0000' }, involvedObject: { kind: 'Pod', namespace: 'fuzz', name: 'web-1' }, reason: 'BackOff', type: 'Warning' }), contentType: 'application/json' }, 'POST', ''],
  ],
  // An alias to no anchor threw a ReferenceError out of the YAML library instead of a config error.
  'export config reader': ['*-', 'a: &x [*x]', `a: &a [${'x,'.repeat(10)}]\nb: [${'*a,'.repeat(200)}]`],
  // A JSON patch copying from a pointer that names nothing left no document, and the server answered 500.
  'patches (JSON, merge, strategic merge) of both APIs': [
    ['application/json-patch+json', '[{"op":"copy","path":"","from":" "}]', '/api/v1'],
    ['application/json-patch+json', '[{"op":"move","path":"","from":"x"}]', '/apis/events.k8s.io/v1'],
    // A move into its own child nested the document in itself: 500 Converting circular structure to JSON.
    ['application/json-patch+json', '[{"op":"move","path":"/","from":""}]', '/api/v1'],
    ['application/json-patch+json', '[{"op":"move","path":"/metadata/x","from":"/metadata"}]', '/apis/events.k8s.io/v1'],
  ],
  // A kubeconfig that is not YAML was refused with the parser's message and its excerpt of the file, over several lines.
  'kubeconfig loader': [{ text: '"', context: undefined }],
};
