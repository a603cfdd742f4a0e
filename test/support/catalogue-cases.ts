import type { CoreEvent } from '../../src/api/index.js';
import { testEvent } from './timeline-events.js';

/** CatalogueCase is one event as upstream writes it, and the kind (and facts) the catalogue must find in it. */
export interface CatalogueCase {
  name: string;
  reason: string;
  message: string;
  type?: string;
  kind?: string;
  object?: string;
  fieldPath?: string;
  host?: string;
  component?: string;
  want: string | undefined;
  facts?: Record<string, string>;
}

/**
 * CATALOGUE_CASES are the catalogue's table: messages as upstream's format strings print them (the file each
 * comes from is named in the kind's source), one case per known variant. The classify table and the incidents'
 * property tests both read them.
 */
export const CATALOGUE_CASES: readonly CatalogueCase[] = [
  // pkg/scheduler/framework/types.go FitError and the plugins' reasons.
  { name: 'insufficient cpu, 1.24+ with preemption', reason: 'FailedScheduling', message: '0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.', want: 'unschedulable-resources', facts: { resources: 'cpu', nodes: '3' } },
  { name: 'insufficient cpu and memory, pre-1.24', reason: 'FailedScheduling', message: '0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.', want: 'unschedulable-resources', facts: { resources: 'cpu, memory' } },
  { name: 'too many pods', reason: 'FailedScheduling', message: '0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.', want: 'unschedulable-resources', facts: { resources: 'pods' } },
  { name: 'extended resource', reason: 'FailedScheduling', message: '0/4 nodes are available: 4 Insufficient nvidia.com/gpu.', want: 'unschedulable-resources', facts: { resources: 'nvidia.com/gpu' } },
  { name: 'untolerated taint', reason: 'FailedScheduling', message: '0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.', want: 'unschedulable-taint', facts: { taint: 'dedicated: gpu' } },
  { name: 'taint, pre-1.25 wording', reason: 'FailedScheduling', message: "0/1 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate.", want: 'unschedulable-taint', facts: { taint: 'node-role.kubernetes.io/master:' } },
  { name: 'taint outnumbers cpu', reason: 'FailedScheduling', message: '0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}.', want: 'unschedulable-taint' },
  { name: 'node affinity/selector', reason: 'FailedScheduling', message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.", want: 'unschedulable-affinity' },
  { name: 'node selector, old wording', reason: 'FailedScheduling', message: "0/3 nodes are available: 3 node(s) didn't match node selector.", want: 'unschedulable-affinity' },
  { name: 'pod anti-affinity', reason: 'FailedScheduling', message: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.", want: 'unschedulable-affinity' },
  { name: 'cordoned', reason: 'FailedScheduling', message: '0/2 nodes are available: 2 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.', want: 'unschedulable-cordoned' },
  { name: 'cordoned as a taint', reason: 'FailedScheduling', message: '0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unschedulable: }.', want: 'unschedulable-cordoned' },
  { name: 'unbound immediate PVC', reason: 'FailedScheduling', message: '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.', want: 'unschedulable-volume' },
  { name: 'missing PVC', reason: 'FailedScheduling', message: '0/1 nodes are available: persistentvolumeclaim "data" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.', want: 'unschedulable-volume', facts: { claim: 'data' } },
  { name: 'volume node affinity', reason: 'FailedScheduling', message: '0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had volume node affinity conflict.', want: 'unschedulable-volume' },
  // pkg/scheduler/framework/preemption/preemption.go, both variants.
  { name: 'preempted by uid', reason: 'Preempted', type: 'Normal', message: 'Preempted by pod 5b4c3d2e-aaaa-bbbb-cccc-111122223333 on node node-a', want: 'preempted', facts: { preemptor: '5b4c3d2e-aaaa-bbbb-cccc-111122223333', node: 'node-a' } },
  { name: 'preempted by name', reason: 'Preempted', type: 'Normal', message: 'Preempted by batch/high-1 on node node-b', want: 'preempted', facts: { preemptor: 'batch/high-1', node: 'node-b' } },
  // pv_controller.go.
  { name: 'storage class missing', kind: 'PersistentVolumeClaim', object: 'data', reason: 'ProvisioningFailed', component: 'persistentvolume-controller', message: 'storageclass.storage.k8s.io "fast" not found', want: 'volume-provisioning', facts: { storageClass: 'fast', problem: 'class-missing' } },
  { name: 'provisioner error', kind: 'PersistentVolumeClaim', object: 'data', reason: 'ProvisioningFailed', message: 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal desc = quota exceeded', want: 'volume-provisioning', facts: { storageClass: 'gp3', problem: 'provisioner' } },
  { name: 'FailedBinding is Normal', kind: 'PersistentVolumeClaim', object: 'data', reason: 'FailedBinding', type: 'Normal', message: 'no persistent volumes available for this claim and no storage class is set', want: 'volume-provisioning', facts: { problem: 'no-volume' } },
  // attachdetach reconciler.
  { name: 'multi-attach', reason: 'FailedAttachVolume', message: 'Multi-Attach error for volume "pvc-1234" Volume is already exclusively attached to one node and can\'t be attached to another', want: 'volume-multi-attach', facts: { volume: 'pvc-1234' } },
  { name: 'multi-attach used by', reason: 'FailedAttachVolume', message: 'Multi-Attach error for volume "pvc-1234" Volume is already used by pod(s) web-0', want: 'volume-multi-attach', facts: { usedBy: 'web-0' } },
  // operation_executor.go generateVolumeMsg.
  { name: 'mount secret missing', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "creds" : secret "db-creds" not found', want: 'mount-missing-source', facts: { volume: 'creds', sourceKind: 'Secret', source: 'db-creds' } },
  { name: 'mount configmap missing', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "conf" : configmap "app-conf" not found', want: 'mount-missing-source', facts: { sourceKind: 'ConfigMap', source: 'app-conf' } },
  // pkg/volume/hostpath/host_path.go checkType, and the configmap and secret volume plugins' missing keys.
  { name: 'hostPath not a socket', reason: 'FailedMount', host: 'node-a', message: 'MountVolume.SetUp failed for volume "docker-sock" : hostPath type check failed: /var/run/docker.sock is not a socket file', want: 'mount-missing-source', facts: { volume: 'docker-sock', path: '/var/run/docker.sock', expected: 'socket file', problem: 'host-path', node: 'node-a' } },
  { name: 'hostPath not a directory', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "logs" : hostPath type check failed: /var/log/app is not a directory', want: 'mount-missing-source', facts: { path: '/var/log/app', expected: 'directory' } },
  { name: 'hostPath not a file', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "conf" : hostPath type check failed: /etc/app.conf is not a file', want: 'mount-missing-source', facts: { path: '/etc/app.conf', expected: 'file' } },
  { name: 'hostPath not a block device', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "disk" : hostPath type check failed: /dev/sdb is not a block device', want: 'mount-missing-source', facts: { path: '/dev/sdb', expected: 'block device' } },
  { name: 'hostPath not a character device', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "fuse" : hostPath type check failed: /dev/fuse is not a character device', want: 'mount-missing-source', facts: { path: '/dev/fuse', expected: 'character device' } },
  { name: 'mount configmap key missing', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "conf" : configmap references non-existent config key: app.yaml', want: 'mount-missing-source', facts: { volume: 'conf', sourceKind: 'ConfigMap', key: 'app.yaml', problem: 'key' } },
  { name: 'mount secret key missing', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "tls" : references non-existent secret key: tls.crt', want: 'mount-missing-source', facts: { sourceKind: 'Secret', key: 'tls.crt' } },
  { name: 'mount cache sync is noise', reason: 'FailedMount', message: 'MountVolume.SetUp failed for volume "conf" : failed to sync configmap cache: timed out waiting for the condition', want: 'other' },
  // kubelet.go's aggregate of a pod's mounts timing out names no cause: its reason and message only.
  { name: 'mount timeout aggregate', reason: 'FailedMount', message: 'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data kube-api-access-x2x7k], failed to process volumes=[]: timed out waiting for the condition', want: 'other' },
  { name: 'cloud attach failure is no multi-attach', reason: 'FailedAttachVolume', message: 'AttachVolume.Attach failed for volume "pvc-1234" : rpc error: code = Internal desc = volume is in use', want: 'other' },
  // kubelet_pods.go through kuberuntime_container.go's `Error: %v`.
  { name: 'configmap missing', reason: 'Failed', fieldPath: 'spec.containers{app}', message: 'Error: configmap "app-env" not found', want: 'config-missing', facts: { sourceKind: 'ConfigMap', source: 'app-env', container: 'app' } },
  { name: 'secret missing', reason: 'Failed', message: 'Error: secret "api-key" not found', want: 'config-missing', facts: { sourceKind: 'Secret', source: 'api-key' } },
  { name: 'configmap key missing', reason: 'Failed', message: "Error: couldn't find key LOG_LEVEL in ConfigMap shop/app-env", want: 'config-missing', facts: { key: 'LOG_LEVEL', source: 'app-env' } },
  { name: 'secret key missing, capitalised (1.1x)', reason: 'Failed', message: "Error: Couldn't find key password in Secret shop/db", want: 'config-missing', facts: { key: 'password', sourceKind: 'Secret', source: 'db' } },
  // image_manager.go and the runtimes' errors.
  { name: 'containerd not found', reason: 'Failed', message: 'Failed to pull image "nginx:1.99": failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found', want: 'image-not-found', facts: { image: 'nginx:1.99' } },
  { name: 'old rpc prefix, manifest unknown', reason: 'Failed', message: 'Failed to pull image "nginx:1.99": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.99": failed to resolve reference "docker.io/library/nginx:1.99": docker.io/library/nginx:1.99: not found', want: 'image-not-found' },
  { name: 'docker manifest unknown', reason: 'Failed', message: 'Failed to pull image "nginx:1.99": rpc error: code = Unknown desc = Error response from daemon: manifest for nginx:1.99 not found: manifest unknown: manifest unknown', want: 'image-not-found' },
  { name: 'pull access denied (containerd)', reason: 'Failed', message: 'Failed to pull image "acme/private:1": failed to pull and unpack image "docker.io/acme/private:1": failed to resolve reference "docker.io/acme/private:1": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed', want: 'image-pull-denied', facts: { image: 'acme/private:1' } },
  { name: 'pull access denied (docker)', reason: 'Failed', message: 'Failed to pull image "acme/private:1": rpc error: code = Unknown desc = Error response from daemon: pull access denied for acme/private, repository does not exist or may require \'docker login\': denied: requested access to the resource is denied', want: 'image-pull-denied' },
  { name: 'anonymous token 401', reason: 'Failed', message: 'Failed to pull image "ghcr.io/acme/x:1": failed to pull and unpack image "ghcr.io/acme/x:1": failed to resolve reference "ghcr.io/acme/x:1": failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized', want: 'image-pull-denied' },
  { name: 'anonymous token 403', reason: 'Failed', message: 'Failed to pull image "registry.example/team/x:1": failed to pull and unpack image "registry.example/team/x:1": failed to resolve reference "registry.example/team/x:1": failed to authorize: failed to fetch anonymous token: unexpected status: 403 Forbidden', want: 'image-pull-denied' },
  { name: 'no such host', reason: 'Failed', host: 'node-a', message: 'Failed to pull image "registry.internal/app:1": failed to pull and unpack image "registry.internal/app:1": failed to resolve reference "registry.internal/app:1": failed to do request: Head "https://registry.internal/v2/app/manifests/1": dial tcp: lookup registry.internal on 10.0.0.10:53: no such host', want: 'image-registry-unreachable', facts: { registryHost: 'registry.internal', node: 'node-a' } },
  { name: 'rate limited', reason: 'Failed', message: 'Failed to pull image "nginx": rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/nginx:latest": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:abc: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.', want: 'image-registry-unreachable' },
  { name: 'registry i/o timeout', reason: 'Failed', message: 'Failed to pull image "registry.internal/app:1": failed to pull and unpack image "registry.internal/app:1": failed to resolve reference "registry.internal/app:1": failed to do request: Head "https://registry.internal/v2/app/manifests/1": dial tcp 10.0.0.9:443: i/o timeout', want: 'image-registry-unreachable', facts: { registryHost: 'registry.internal' } },
  // image_manager.go evalCRIPullErr (1.30+): the runtime's RegistryUnavailable, and its signature check, in the kubelet's words.
  { name: 'registry unavailable (evalCRIPullErr)', reason: 'Failed', message: 'Failed to pull image "registry.internal/app:1": image pull failed for registry.internal/app:1 because the registry is unavailable: connection refused', want: 'image-registry-unreachable', facts: { image: 'registry.internal/app:1' } },
  { name: 'signature validation failed (evalCRIPullErr): the kubelet\'s words, no cause added', reason: 'Failed', message: 'Failed to pull image "registry.internal/app:1": image pull failed for registry.internal/app:1 because the signature validation failed: no signature', want: 'image-pull-backoff', facts: { error: 'image pull failed for registry.internal/app:1 because the signature validation failed: no signature' } },
  { name: 'never pull', reason: 'ErrImageNeverPull', message: 'Container image "app:dev" is not present with pull policy of Never', want: 'image-invalid', facts: { image: 'app:dev', problem: 'never-pull' } },
  { name: 'invalid reference', reason: 'InspectFailed', message: 'Failed to apply default image tag "App:Latest": couldn\'t parse image reference "App:Latest": invalid reference format: repository name must be lowercase', want: 'image-invalid', facts: { image: 'App:Latest' } },
  { name: 'inspect failed is the runtime, not the reference', reason: 'InspectFailed', message: 'Failed to inspect image "app:1": rpc error: code = Unavailable desc = connection error', want: 'image-invalid', facts: { image: 'app:1', problem: 'inspect', error: 'rpc error: code = Unavailable desc = connection error' } },
  { name: 'back-off pulling (Normal)', reason: 'BackOff', type: 'Normal', message: 'Back-off pulling image "nginx:1.99"', want: 'image-pull-backoff', facts: { image: 'nginx:1.99' } },
  { name: 'Error: ErrImagePull', reason: 'Failed', message: 'Error: ErrImagePull', want: 'image-pull-backoff' },
  { name: 'Error: ImagePullBackOff', reason: 'Failed', message: 'Error: ImagePullBackOff', want: 'image-pull-backoff' },
  { name: 'unknown pull failure', reason: 'Failed', message: 'Failed to pull image "x:1": rpc error: code = Unknown desc = something new', want: 'image-pull-backoff', facts: { error: 'rpc error: code = Unknown desc = something new' } },
  // kuberuntime_container.go startContainer `Error: %v` with runc's errors.
  { name: 'command not found (containerd)', reason: 'Failed', fieldPath: 'spec.containers{app}', message: 'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "wge": executable file not found in $PATH: unknown', want: 'start-error', facts: { command: 'wge', container: 'app', problem: 'not-found' } },
  { name: 'command not found (docker)', reason: 'Failed', message: 'Error: failed to start container "app": Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "/app/run": stat /app/run: no such file or directory: unknown', want: 'start-error', facts: { command: '/app/run' } },
  { name: 'exec format error', reason: 'Failed', message: 'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec /app/server: exec format error: unknown', want: 'start-error', facts: { problem: 'exec-format' } },
  { name: 'permission denied', reason: 'Failed', message: 'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: "/entry.sh": permission denied: unknown', want: 'start-error', facts: { command: '/entry.sh', problem: 'permission' } },
  { name: 'other Error: is a plain Warning', reason: 'Failed', message: 'Error: context deadline exceeded', want: 'other' },
  // kuberuntime_manager.go doBackOff.
  { name: 'crash loop', reason: 'BackOff', fieldPath: 'spec.containers{app}', message: 'Back-off restarting failed container app in pod web-1_shop(0b1c2d3e-aaaa-bbbb-cccc-111122223333)', want: 'crash-loop', facts: { container: 'app' } },
  { name: 'crash loop, old wording', reason: 'BackOff', message: 'Back-off restarting failed container', want: 'crash-loop' },
  // prober.go.
  { name: 'liveness failed', reason: 'Unhealthy', message: 'Liveness probe failed: HTTP probe failed with statuscode: 500', want: 'probe-liveness', facts: { probe: 'liveness', output: 'HTTP probe failed with statuscode: 500' } },
  { name: 'liveness errored, 1.25+ wording', reason: 'Unhealthy', message: 'Liveness probe errored and resulted in unknown state: rpc error: code = DeadlineExceeded desc = context deadline exceeded', want: 'probe-liveness', facts: { probe: 'liveness', output: 'rpc error: code = DeadlineExceeded desc = context deadline exceeded' } },
  { name: 'readiness errored, 1.25+ wording', reason: 'Unhealthy', message: 'Readiness probe errored and resulted in unknown state: rpc error: code = NotFound desc = container is not created or running', want: 'probe-readiness', facts: { output: 'rpc error: code = NotFound desc = container is not created or running' } },
  { name: 'liveness errored', reason: 'Unhealthy', message: 'Liveness probe errored: rpc error: code = NotFound desc = container is not created or running', want: 'probe-liveness' },
  { name: 'startup failed', reason: 'Unhealthy', message: 'Startup probe failed: Get "http://10.0.0.5:8080/healthz": dial tcp 10.0.0.5:8080: connect: connection refused', want: 'probe-liveness', facts: { probe: 'startup' } },
  { name: 'killing for liveness (Normal)', reason: 'Killing', type: 'Normal', message: 'Container app failed liveness probe, will be restarted', want: 'probe-liveness', facts: { container: 'app' } },
  { name: 'readiness failed', reason: 'Unhealthy', message: 'Readiness probe failed: Get "http://10.0.0.5:8080/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', want: 'probe-readiness' },
  { name: 'plain Killing is not a failure', reason: 'Killing', type: 'Normal', message: 'Stopping container app', want: undefined },
  // Sandbox, DNS.
  { name: 'CNI failed', reason: 'FailedCreatePodSandBox', host: 'node-a', message: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc123": plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized', want: 'sandbox-failed', facts: { plugin: 'calico', node: 'node-a' } },
  { name: 'network not ready', reason: 'NetworkNotReady', host: 'node-a', message: 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized', want: 'sandbox-failed', facts: { plugin: 'NetworkPluginNotReady' } },
  { name: 'nameserver limits', reason: 'DNSConfigForming', host: 'node-a', message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.0.0.2 10.0.0.3 10.0.0.4', want: 'dns-config', facts: { limit: 'nameservers', applied: '10.0.0.2 10.0.0.3 10.0.0.4' } },
  { name: 'search line limits', reason: 'DNSConfigForming', message: 'Search Line limits were exceeded, some search paths have been omitted, the applied search line is: a.svc b.svc c.svc', want: 'dns-config', facts: { limit: 'search' } },
  // Eviction helpers.go and node status.
  { name: 'evicted on memory', reason: 'Evicted', host: 'node-a', message: 'The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki. Container app was using 812Mi, request is 128Mi, has larger consumption of memory. ', want: 'evicted-pressure', facts: { resource: 'memory', threshold: '100Mi', available: '51200Ki', node: 'node-a' } },
  { name: 'evicted on memory, older', reason: 'Evicted', message: 'The node was low on resource: memory. Container app was using 812Mi, which exceeds its request of 128Mi. ', want: 'evicted-pressure', facts: { resource: 'memory' } },
  { name: 'evicted on condition', reason: 'Evicted', message: 'The node had condition: [DiskPressure]. ', want: 'evicted-pressure', facts: { condition: 'DiskPressure' } },
  { name: 'threshold met on node', kind: 'Node', object: 'node-a', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim ephemeral-storage', want: 'evicted-pressure', facts: { resource: 'ephemeral-storage', node: 'node-a' } },
  { name: 'node has disk pressure (Normal)', kind: 'Node', object: 'node-a', reason: 'NodeHasDiskPressure', type: 'Normal', message: 'Node node-a status is now: NodeHasDiskPressure', want: 'evicted-pressure', facts: { condition: 'DiskPressure' } },
  { name: 'node has insufficient memory (Normal)', kind: 'Node', object: 'node-a', reason: 'NodeHasInsufficientMemory', type: 'Normal', message: 'Node node-a status is now: NodeHasInsufficientMemory', want: 'evicted-pressure', facts: { condition: 'InsufficientMemory', node: 'node-a' } },
  { name: 'node has insufficient PID (Normal)', kind: 'Node', object: 'node-a', reason: 'NodeHasInsufficientPID', type: 'Normal', message: 'Node node-a status is now: NodeHasInsufficientPID', want: 'evicted-pressure', facts: { condition: 'InsufficientPID' } },
  { name: 'container ephemeral limit', reason: 'Evicted', message: 'Container app exceeded its local ephemeral storage limit "1Gi". ', want: 'evicted-ephemeral-storage', facts: { container: 'app', limit: '1Gi', scope: 'container' } },
  { name: 'pod ephemeral limit', reason: 'Evicted', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. ', want: 'evicted-ephemeral-storage', facts: { limit: '2Gi', scope: 'pod' } },
  { name: 'emptyDir limit', reason: 'Evicted', message: 'Usage of EmptyDir volume "scratch" exceeds the limit "500Mi". ', want: 'evicted-ephemeral-storage', facts: { volume: 'scratch', limit: '500Mi' } },
  { name: 'system OOM', kind: 'Node', object: 'node-a', reason: 'SystemOOM', message: 'System OOM encountered, victim process: java, pid: 4242', want: 'oom-node', facts: { process: 'java', pid: '4242' } },
  { name: 'NPD OOMKilling', kind: 'Node', object: 'node-a', reason: 'OOMKilling', message: 'Memory cgroup out of memory: Killed process 4242 (java) total-vm:1234kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB', want: 'oom-node', facts: { process: 'java', cgroup: 'container' } },
  { name: 'NPD OOMKilling, the node out of memory', kind: 'Node', object: 'node-a', reason: 'OOMKilling', message: 'Out of memory: Killed process 4242 (java) total-vm:1234kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:100kB oom_score_adj:0', want: 'oom-node', facts: { process: 'java', pid: '4242' } },
  { name: 'NPD OOMKilling, older kernels', kind: 'Node', object: 'node-a', reason: 'OOMKilling', message: 'Kill process 4242 (java) score 900 or sacrifice child\nKilled process 4242 (java) total-vm:1234kB, anon-rss:1000kB, file-rss:0kB', want: 'oom-node', facts: { process: 'java', pid: '4242' } },
  { name: 'node not ready (Normal, on the node)', kind: 'Node', object: 'node-a', reason: 'NodeNotReady', type: 'Normal', component: 'node-controller', message: 'Node node-a status is now: NodeNotReady', want: 'node-not-ready', facts: { node: 'node-a' } },
  { name: 'node not ready on a pod', reason: 'NodeNotReady', component: 'node-controller', message: 'Node is not ready', want: 'node-not-ready' },
  { name: 'taint manager eviction (Normal)', reason: 'TaintManagerEviction', type: 'Normal', component: 'taint-eviction-controller', message: 'Marking for deletion Pod shop/web-1', want: 'node-not-ready', facts: { evicted: 'true' } },
  { name: 'image GC failed', kind: 'Node', object: 'node-a', reason: 'ImageGCFailed', message: 'failed to garbage collect required amount of images. Wanted to free 5368709120 bytes, but freed 0 bytes', want: 'node-disk' },
  { name: 'free disk space failed', kind: 'Node', object: 'node-a', reason: 'FreeDiskSpaceFailed', message: 'failed to garbage collect required amount of images. Attempted to free 1 bytes, but only found 0 bytes eligible to free.', want: 'node-disk' },
  { name: 'container GC failed (runtime down)', kind: 'Node', object: 'node-a', reason: 'ContainerGCFailed', message: 'rpc error: code = Unknown desc = Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?', want: 'node-disk' },
  { name: 'invalid disk capacity', kind: 'Node', object: 'node-a', reason: 'InvalidDiskCapacity', message: 'invalid capacity 0 on image filesystem', want: 'node-disk' },
  // Controllers' FailedCreate.
  { name: 'quota exceeded (ReplicaSet)', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', component: 'replicaset-controller', message: 'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: exceeded quota: compute-resources, requested: limits.memory=2Gi, used: limits.memory=7Gi, limited: limits.memory=8Gi', want: 'create-forbidden-quota', facts: { quota: 'compute-resources', requested: 'limits.memory=2Gi', used: 'limits.memory=7Gi', limited: 'limits.memory=8Gi', resources: 'limits.memory', creates: 'pods' } },
  { name: 'quota must specify', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: pods "web-7d4b9c8f5-abcde" is forbidden: failed quota: compute-resources: must specify limits.cpu for: app; limits.memory for: app', want: 'create-forbidden-quota', facts: { quota: 'compute-resources', problem: 'unspecified' } },
  { name: 'quota from StatefulSet', kind: 'StatefulSet', object: 'db', reason: 'FailedCreate', message: 'create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10', want: 'create-forbidden-quota', facts: { quota: 'pods' } },
  { name: 'quota refusing a StatefulSet\'s claim', kind: 'StatefulSet', object: 'db', reason: 'FailedCreate', message: 'create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: persistentvolumeclaims "data-db-0" is forbidden: exceeded quota: storage, requested: requests.storage=10Gi, used: requests.storage=95Gi, limited: requests.storage=100Gi', want: 'create-forbidden-quota', facts: { quota: 'storage', resources: 'requests.storage', creates: 'PersistentVolumeClaims' } },
  { name: 'quota refusing a CronJob\'s Job', kind: 'CronJob', object: 'nightly', reason: 'FailedCreate', component: 'cronjob-controller', message: 'Error creating job: jobs.batch "nightly-29000000" is forbidden: exceeded quota: jobs, requested: count/jobs.batch=1, used: count/jobs.batch=5, limited: count/jobs.batch=5', want: 'create-forbidden-quota', facts: { quota: 'jobs', creates: 'Jobs' } },
  { name: 'service account missing (Job)', kind: 'Job', object: 'migrate', reason: 'FailedCreate', component: 'job-controller', message: 'Error creating: pods "migrate-" is forbidden: error looking up service account shop/migrator: serviceaccount "migrator" not found', want: 'create-forbidden-serviceaccount', facts: { serviceAccount: 'migrator' } },
  { name: 'PodSecurity restricted', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)', want: 'create-forbidden-admission', facts: { level: 'restricted:latest', problem: 'pod-security' } },
  { name: 'webhook denied', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: admission webhook "validate.kyverno.svc" denied the request: image tag latest is not allowed', want: 'create-forbidden-admission', facts: { webhook: 'validate.kyverno.svc', detail: 'image tag latest is not allowed' } },
  { name: 'webhook unreachable', kind: 'DaemonSet', object: 'agent', reason: 'FailedCreate', message: 'Error creating: Internal error occurred: failed calling webhook "mutate.example.com": failed to call webhook: Post "https://hook.example.svc:443/mutate?timeout=10s": dial tcp 10.0.0.9:443: connect: connection refused', want: 'create-forbidden-admission', facts: { webhook: 'mutate.example.com', problem: 'webhook-unreachable' } },
  { name: 'LimitRange refusal', kind: 'ReplicaSet', object: 'web-7d4b9c8f5', reason: 'FailedCreate', message: 'Error creating: pods "web-7d4b9c8f5-x2x7k" is forbidden: maximum cpu usage per Container is 1, but limit is 2', want: 'create-forbidden-admission', facts: { problem: 'forbidden', detail: 'maximum cpu usage per Container is 1, but limit is 2' } },
  // horizontal.go.
  { name: 'HPA without metrics API', kind: 'HorizontalPodAutoscaler', object: 'web', reason: 'FailedGetResourceMetric', component: 'horizontal-pod-autoscaler', message: 'failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)', want: 'hpa-metrics', facts: { metric: 'cpu', problem: 'no-api' } },
  { name: 'HPA invalid metrics', kind: 'HorizontalPodAutoscaler', object: 'web', reason: 'FailedComputeMetricsReplicas', message: 'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API', want: 'hpa-metrics', facts: { metric: 'cpu', problem: 'no-api' } },
  { name: 'HPA missing request', kind: 'HorizontalPodAutoscaler', object: 'web', reason: 'FailedGetResourceMetric', message: 'failed to get cpu utilization: missing request for cpu in container app of Pod web-7d4b9c8f5-x2x7k', want: 'hpa-metrics', facts: { problem: 'missing-request', container: 'app', pod: 'web-7d4b9c8f5-x2x7k' } },
  // job_controller.go.
  { name: 'backoff limit', kind: 'Job', object: 'migrate', reason: 'BackoffLimitExceeded', component: 'job-controller', message: 'Job has reached the specified backoff limit', want: 'job-backoff-limit' },
  { name: 'deadline', kind: 'Job', object: 'migrate', reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline', want: 'job-deadline' },
  // Kubelet v1.33.13 with containerd 1.6.20 and runc 1.1.5, as test/incidents-kubelet.test.ts records them, where its words
  // are not a case above.
  { name: 'secret key missing, 1.33 lowercase', reason: 'Failed', fieldPath: 'spec.containers{main}', host: 'real-1', message: "Error: couldn't find key nokey in Secret config/creds", want: 'config-missing', facts: { key: 'nokey', sourceKind: 'Secret', source: 'creds', container: 'main' } },
  { name: 'exec liveness output ends with a newline (1.33)', reason: 'Unhealthy', fieldPath: 'spec.containers{main}', message: "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n", want: 'probe-liveness', facts: { probe: 'liveness', output: "cat: can't open '/tmp/healthy': No such file or directory" } },
  { name: 'not found in a registry on host:port (1.33, containerd 1.6)', reason: 'Failed', fieldPath: 'spec.containers{main}', message: 'Failed to pull image "127.0.0.1:41155/absent:1": rpc error: code = NotFound desc = failed to pull and unpack image "127.0.0.1:41155/absent:1": failed to resolve reference "127.0.0.1:41155/absent:1": 127.0.0.1:41155/absent:1: not found', want: 'image-not-found', facts: { image: '127.0.0.1:41155/absent:1' } },
  { name: 'registry 401 on host:port (1.33, containerd 1.6)', reason: 'Failed', fieldPath: 'spec.containers{main}', message: 'Failed to pull image "127.0.0.1:39891/private:1": failed to pull and unpack image "127.0.0.1:39891/private:1": failed to resolve reference "127.0.0.1:39891/private:1": pulling from host 127.0.0.1:39891 failed with status code [manifests 1]: 401 Unauthorized', want: 'image-pull-denied', facts: { image: '127.0.0.1:39891/private:1' } },
  { name: 'image already present is no failure (1.33)', reason: 'Pulled', type: 'Normal', message: 'Container image "kevents.local/busybox:1.35" already present on machine', want: undefined },
  { name: 'cgroup v1 maintenance mode is a plain Warning (1.33)', kind: 'Node', object: 'real-1', reason: 'CgroupV1', component: 'kubelet', message: 'cgroup v1 support is in maintenance mode, please migrate to cgroup v2', want: 'other' },
  // Anything else.
  { name: 'unknown Warning', reason: 'FailedSync', message: 'error determining status: rpc error: code = Unknown', want: 'other' },
  { name: 'unknown Normal is no failure', reason: 'Pulled', type: 'Normal', message: 'Successfully pulled image "nginx"', want: undefined },
  { name: 'ScalingReplicaSet is no failure', kind: 'Deployment', object: 'web', reason: 'ScalingReplicaSet', type: 'Normal', message: 'Scaled up replica set web-7d4b9c8f5 to 3', want: undefined },
];

/** caseEvent is a case's event, about `c.object` (default Pod web-1) in namespace `namespace` (default shop). */
export function caseEvent(c: CatalogueCase, namespace = 'shop'): CoreEvent {
  return testEvent({
    name: `e-${c.name.replace(/\W+/g, '-')}`,
    namespace,
    kind: c.kind ?? 'Pod',
    object: c.object ?? 'web-1',
    reason: c.reason,
    message: c.message,
    type: c.type ?? 'Warning',
    first: 0,
    ...(c.fieldPath !== undefined ? { fieldPath: c.fieldPath } : {}),
    ...(c.host !== undefined ? { host: c.host } : {}),
    ...(c.component !== undefined ? { component: c.component } : {}),
  });
}
