import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goPlatform, versionInfo } from './version-info.js';

// kubectl's dispatcher picks the bundled kubectl by `minor`; these are the ones it carries.
const BUNDLED_MINORS = ['27', '28', '29', '30', '31', '32', '33'];
const SEMVER = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

void test('versionInfo names a Kubernetes minor a bundled kubectl matches', () => {
  const info = versionInfo({ keventsVersion: '0.1.0' });
  assert.equal(info.major, '1');
  assert.ok(BUNDLED_MINORS.includes(info.minor), info.minor);
  assert.equal(info.emulationMinor, info.minor);
  assert.equal(info.minCompatibilityMinor, String(Number(info.minor) - 1));
});

void test('versionInfo gitVersion is semver with the Kubernetes release and kevents as build metadata', () => {
  const cases: Array<[string | undefined, string]> = [
    ['0.1.0', 'v1.33.0+kevents.0.1.0'],
    ['1.2.3-rc.1', 'v1.33.0+kevents.1.2.3-rc.1'],
    ['1.0.0+sha/abc', 'v1.33.0+kevents.1.0.0-sha-abc'],
    [undefined, 'v1.33.0+kevents.0.0.0'],
  ];
  for (const [kevents, want] of cases) {
    const info = versionInfo(kevents === undefined ? {} : { keventsVersion: kevents });
    assert.equal(info.gitVersion, want);
    assert.match(info.gitVersion, SEMVER);
    assert.ok(info.gitVersion.startsWith(`v${info.major}.${info.minor}.`));
  }
});

void test('versionInfo carries every field of version.Info as a string, in upstream order', () => {
  const info = versionInfo({ gitCommit: 'abc', buildDate: '2026-01-02T03:04:05Z', runtime: 'node-v20.0.0', platform: 'linux/amd64' });
  assert.deepEqual(Object.keys(info), [
    'major', 'minor', 'emulationMajor', 'emulationMinor', 'minCompatibilityMajor', 'minCompatibilityMinor',
    'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform',
  ]);
  for (const v of Object.values(info)) assert.equal(typeof v, 'string');
  assert.equal(info.gitCommit, 'abc');
  assert.equal(info.gitTreeState, 'clean');
  assert.equal(info.buildDate, '2026-01-02T03:04:05Z');
  assert.equal(info.goVersion, 'node-v20.0.0');
  assert.equal(versionInfo().gitTreeState, '');
});

void test('goPlatform spells Node platforms the Go way', () => {
  const cases: Array<[string, string, string]> = [
    ['linux', 'x64', 'linux/amd64'],
    ['darwin', 'arm64', 'darwin/arm64'],
    ['win32', 'x64', 'windows/amd64'],
    ['linux', 'ia32', 'linux/386'],
    ['freebsd', 'riscv64', 'freebsd/riscv64'],
  ];
  for (const [platform, arch, want] of cases) assert.equal(goPlatform(platform, arch), want);
});
