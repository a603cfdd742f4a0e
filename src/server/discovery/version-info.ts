/**
 * The `/version` document. kubectl's dispatcher reads `minor` to pick the bundled kubectl it
 * runs, and `kubectl version` parses `gitVersion` as semver for its skew warning, so both
 * must name a Kubernetes release that the bundled clients know.
 */

/** KUBERNETES_MAJOR is the Kubernetes major version kevents answers as. */
export const KUBERNETES_MAJOR = '1';
/** KUBERNETES_MINOR is the Kubernetes minor version kevents answers as: the newest bundled kubectl. */
export const KUBERNETES_MINOR = '33';
/** KUBERNETES_PATCH is the patch level of the Kubernetes release whose API kevents serves. */
export const KUBERNETES_PATCH = '0';

/** VersionInfo is apimachinery's version.Info, the JSON body of `GET /version`. */
export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** VersionInfoOptions describes the kevents build; every field has a default. */
export interface VersionInfoOptions {
  /** keventsVersion is the kevents release, carried as semver build metadata of gitVersion. */
  keventsVersion?: string;
  /** gitCommit is the kevents commit, when known. */
  gitCommit?: string;
  /** buildDate is an RFC 3339 time, when known. */
  buildDate?: string;
  /** platform is `<os>/<arch>` in Go's spelling. */
  platform?: string;
  /** runtime names the runtime in the `goVersion` slot, e.g. `node-v20.19.0`. */
  runtime?: string;
}

const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

/** goPlatform spells a Node platform and arch the way Go's `runtime.GOOS/GOARCH` would. */
export function goPlatform(platform: string, arch: string): string {
  const os = platform === 'win32' ? 'windows' : platform;
  return `${os}/${GO_ARCH[arch] ?? arch}`;
}

/**
 * versionInfo returns the `/version` document. gitVersion is `v1.33.0+kevents.<version>`:
 * build metadata, not a pre-release tag, so semver range checks such as `>=1.33.0` still hold.
 */
export function versionInfo(options: VersionInfoOptions = {}): VersionInfo {
  const kevents = (options.keventsVersion ?? '0.0.0').replace(/[^0-9A-Za-z.-]/g, '-');
  const previousMinor = String(Number(KUBERNETES_MINOR) - 1);
  return {
    major: KUBERNETES_MAJOR,
    minor: KUBERNETES_MINOR,
    emulationMajor: KUBERNETES_MAJOR,
    emulationMinor: KUBERNETES_MINOR,
    minCompatibilityMajor: KUBERNETES_MAJOR,
    minCompatibilityMinor: previousMinor,
    gitVersion: `v${KUBERNETES_MAJOR}.${KUBERNETES_MINOR}.${KUBERNETES_PATCH}+kevents.${kevents}`,
    gitCommit: options.gitCommit ?? '',
    gitTreeState: options.gitCommit === undefined ? '' : 'clean',
    buildDate: options.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: options.runtime ?? `node-${process.version}`,
    compiler: 'gc',
    platform: options.platform ?? goPlatform(process.platform, process.arch),
  };
}
