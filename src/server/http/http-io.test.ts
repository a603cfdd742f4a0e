import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../api/index.js';
import { checkRouteAccept, LIST_PRODUCES, negotiateOutput, OBJECT_PRODUCES, warningHeader } from './http-io.js';

/** refusal is the Status checkRouteAccept throws for `accept`, or undefined when it lets the request through. */
function refusal(accept: string | undefined, produces: readonly string[] = OBJECT_PRODUCES): unknown {
  try {
    checkRouteAccept(accept, produces);
    return undefined;
  } catch (e) {
    assert.ok(isStatusError(e));
    return e.status;
  }
}

describe('checkRouteAccept (kube-apiserver router check of Accept)', () => {
  it('lets through no header, the full wildcard, and any listed type whatever its parameters or spaces', () => {
    for (const accept of [
      undefined,
      '',
      '*/*',
      'application/json',
      'application/yaml',
      'text/plain, */*',
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
      'application/xml,  application/json ;q=0.5',
      'application/vnd.kubernetes.protobuf;as=Table, application/json',
    ]) {
      assert.equal(refusal(accept), undefined, String(accept));
    }
  });

  it('refuses, with the router own 406, a wildcard subtype, another case, and what no listed type names', () => {
    for (const accept of ['application/*', 'Application/JSON', 'application/xml', 'text/html,text/plain', 'application/vnd.kubernetes.protobuf', 'application/jsonx']) {
      assert.deepEqual(
        refusal(accept),
        {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml',
          reason: 'NotAcceptable',
          details: {},
          code: 406,
        },
        accept,
      );
    }
  });

  it('names the stream type on the list and watch routes, where it is accepted', () => {
    assert.equal(refusal('application/json;stream=watch', LIST_PRODUCES), undefined);
    assert.match(String((refusal('application/xml', LIST_PRODUCES) as { message: string }).message), /Available representations: application\/json, application\/yaml, application\/json;stream=watch$/);
  });
});

describe('negotiateOutput', () => {
  it('answers JSON, YAML or a Table as the header asks, the usual headers without parsing them', () => {
    const cases: [string | undefined, boolean, string][] = [
      [undefined, true, 'json'],
      ['', true, 'json'],
      ['application/json', false, 'json'],
      ['*/*', false, 'json'],
      ['application/json, */*', false, 'json'],
      ['application/yaml', false, 'yaml'],
      ['application/yaml;q=0.5, application/json', false, 'json'],
      ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json', true, 'table'],
      ['application/json;as=Table;v=v1;g=meta.k8s.io,application/json', false, 'json'],
    ];
    for (const [accept, allowTable, kind] of cases) assert.equal(negotiateOutput(accept, allowTable).kind, kind, String(accept));
    assert.throws(() => negotiateOutput('application/vnd.kubernetes.protobuf', false), /only the following media types are accepted/);
  });
});

describe('warningHeader', () => {
  const cases: [string, string][] = [
    ['unknown field "spec"', '299 - "unknown field \\"spec\\""'],
    ['café ☕', '299 - "caf\\u00e9 \\u2615"'],
    ['bidi \u202e and ESC \u001b[31m', '299 - "bidi \\u202e and ESC \\u001b[31m"'],
    ['line\nbreak', '299 - "line\\nbreak"'],
  ];
  for (const [text, want] of cases) {
    it(JSON.stringify(text), () => {
      const got = warningHeader(text);
      assert.equal(got, want);
      assert.match(got, /^[\x20-\x7e]*$/);
    });
  }
});
