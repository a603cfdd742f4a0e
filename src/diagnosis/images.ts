import type { CoreEvent } from '../api/index.js';
import type { Facts, FailureKind, StepTemplate } from './kind.js';
import { defined, firstGroup, podWords, present, said, thePod } from './text.js';

/**
 * Image failures, as the kubelet reports them (pkg/kubelet/images/image_manager.go):
 * `Failed` (Warning) `Failed to pull image %q: %v` with the runtime's error, then
 * `Failed` `Error: ErrImagePull`, `BackOff` (Normal) `Back-off pulling image %q`
 * and `Failed` `Error: ImagePullBackOff`; `InspectFailed` `Failed to apply default
 * image tag %q: %v` / `Failed to inspect image %q: %v`; `ErrImageNeverPull`
 * `Container image %q is not present with pull policy of Never`. The prefix of
 * the runtime's error changed across releases (`rpc error: code = Unknown desc =`
 * before containerd's `failed to pull and unpack image`): the kinds match its tail.
 */

/** PULL_FAILED is the kubelet's pull failure, whatever the runtime's error. */
const PULL_FAILED = /Failed to pull image "([^"]*)"/;

/** DENIED is the registry's answer for a private repository without credentials, and for one that does not exist. */
const DENIED =
  /pull access denied|repository does not exist or may require|insufficient_scope|authorization failed|failed to authorize|401 Unauthorized|403 Forbidden|unauthorized: |denied: |requested access to the resource is denied/i;
const NOT_FOUND = /: not found$|: not found\b|manifest unknown|manifest for \S+ not found|not found: manifest|name unknown/i;
const UNREACHABLE =
  /no such host|i\/o timeout|connection refused|network is unreachable|TLS handshake timeout|Timeout exceeded|context deadline exceeded|toomanyrequests|429 Too Many Requests|registry is unavailable|dial tcp/i;

function pullFailure(e: CoreEvent): { image: string; error: string } | undefined {
  if (e.reason !== 'Failed' && e.reason !== 'ErrImagePull') return undefined;
  const m = e.message ?? '';
  const image = firstGroup(PULL_FAILED, m);
  if (image === undefined) return undefined;
  const error = m.slice(m.indexOf('":') + 2).trim();
  return { image, error };
}

/** theImage is `image "nginx:1.99"`, or `its image` when the events name none. */
function theImage(f: Facts): string {
  return present(f.image) ? `image ${said(f.image)}` : 'its image';
}

/** because is the runtime's error in brackets, ` ("…")`, or nothing when it is empty. */
function because(f: Facts): string {
  return present(f.error) ? ` (${said(f.error)})` : '';
}

function pullSteps(f: Facts): StepTemplate[] {
  return [
    { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.containers[*].image}'], why: 'the image references the pod asks for: registry, repository and tag' },
    { words: ['kubectl', 'get', 'pod', ...podWords(f), '-o', 'jsonpath={.spec.serviceAccountName} {.spec.imagePullSecrets}'], why: 'a private registry needs pull secrets, on the pod or its service account' },
  ];
}

/** IMAGE_KINDS are the image failure kinds, the registry's answers before the kubelet's back-off. */
export const IMAGE_KINDS: readonly FailureKind[] = [
  {
    id: 'image-pull-denied',
    role: 'cause',
    subject: 'object',
    reasons: ['Failed', 'ErrImagePull'],
    match: (e) => {
      const p = pullFailure(e);
      return p !== undefined && DENIED.test(p.error) ? { image: p.image, error: p.error } : undefined;
    },
    // The registry gives one answer for both: it does not tell a stranger which repositories exist.
    cause: (f) =>
      `${thePod(f)} cannot pull ${theImage(f)}: the registry refused it, which means the repository does not exist or it is private and the pod has no credentials for it.`,
    steps: pullSteps,
  },
  {
    id: 'image-not-found',
    role: 'cause',
    subject: 'object',
    reasons: ['Failed', 'ErrImagePull'],
    match: (e) => {
      const p = pullFailure(e);
      return p !== undefined && NOT_FOUND.test(p.error) ? { image: p.image, error: p.error } : undefined;
    },
    cause: (f) => `${thePod(f)} cannot pull ${theImage(f)}: the registry has no such image (check the repository and tag).`,
    steps: pullSteps,
  },
  {
    id: 'image-registry-unreachable',
    role: 'cause',
    subject: 'object',
    reasons: ['Failed', 'ErrImagePull'],
    match: (e) => {
      const p = pullFailure(e);
      if (p === undefined || !UNREACHABLE.test(p.error)) return undefined;
      return defined({ image: p.image, error: p.error, registryHost: firstGroup(/lookup ([^\s:]+)/, p.error) ?? firstGroup(/https?:\/\/([^/\s:"]+)/, p.error), node: e.source?.host });
    },
    cause: (f) =>
      /toomanyrequests|429/i.test(f.error ?? '')
        ? `${thePod(f)} cannot pull ${theImage(f)}: the registry is rate-limiting pulls.`
        : `${thePod(f)} cannot pull ${theImage(f)}: the node cannot reach the registry${present(f.registryHost) ? ` ${said(f.registryHost)}` : ''}${because(f)}.`,
    steps: (f) => [
      ...pullSteps(f).slice(0, 1),
      { words: ['kubectl', 'get', 'events', '-A', '--field-selector', 'reason=Failed', '-o', 'wide'], why: 'whether other pods fail to reach the same registry, from every node or only this one' },
    ],
  },
  {
    id: 'image-invalid',
    role: 'cause',
    subject: 'object',
    reasons: ['InspectFailed', 'ErrImageNeverPull', 'InvalidImageName', 'Failed'],
    match: (e) => {
      const m = e.message ?? '';
      const never = firstGroup(/Container image "([^"]*)" is not present with pull policy of Never/, m);
      if (never !== undefined) return { image: never, problem: 'never-pull' };
      const tag = firstGroup(/Failed to apply default image tag "([^"]*)"/, m);
      if (tag !== undefined) return { image: tag, problem: 'malformed', error: m };
      // GetImageRef failing: the runtime could not say whether the image is there, whatever the reference.
      const inspect = /Failed to inspect image "([^"]*)":\s*([\s\S]*)$/.exec(m);
      if (inspect) return { image: inspect[1]!, problem: 'inspect', error: inspect[2]!.trim() };
      if (/^Error: (?:InvalidImageName|ErrImageNeverPull)$/.test(m.trim())) return { problem: 'malformed', error: m };
      return undefined;
    },
    cause: (f) =>
      f.problem === 'never-pull'
        ? `${thePod(f)} cannot start: ${theImage(f)} is not on the node and its pull policy is Never.`
        : f.problem === 'inspect'
          ? `${thePod(f)} cannot start: the node's container runtime cannot inspect ${theImage(f)}${because(f)}.`
          : `${thePod(f)} cannot start: its image reference${present(f.image) ? ` ${said(f.image)}` : ''} is not valid${because(f)}.`,
    steps: (f) => pullSteps(f).slice(0, 1),
  },
  {
    // image_manager.go `Back-off pulling image %q` (Normal) and kuberuntime_container.go's `Error: %v` (ErrImagePull,
    // ImagePullBackOff) say a pull failed, not why: the `Failed to pull` before them does.
    id: 'image-pull-backoff',
    role: 'symptom',
    subject: 'object',
    reasons: ['BackOff', 'Failed', 'ErrImagePull', 'ImagePullBackOff'],
    match: (e) => {
      const m = (e.message ?? '').trim();
      const image = firstGroup(/Back-off pulling image "([^"]*)"/i, m);
      if (image !== undefined) return { image };
      if (/^Error: (?:ErrImagePull|ImagePullBackOff)$/.test(m)) return {};
      const p = pullFailure(e);
      return p !== undefined ? { image: p.image, error: p.error } : undefined;
    },
    cause: (f) =>
      present(f.error)
        ? `${thePod(f)} cannot pull ${theImage(f)}: ${said(f.error)}.`
        : `${thePod(f)} cannot pull ${theImage(f)}; events do not record the registry's answer: read the pod's events from before the back-off.`,
    steps: pullSteps,
    explainedBy: ['image-pull-denied', 'image-not-found', 'image-registry-unreachable', 'image-invalid'],
  },
];
