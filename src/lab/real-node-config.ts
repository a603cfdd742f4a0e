// The real node's configuration files: containerd's, the kubelet's and a loopback-only CNI network. The settings
// and the reason for each are in the spec's "A real kubelet" (containerd 1.6 and kubelet 1.33 on a machine whose
// network is loopback only).

/** Taint is a node taint as the kubelet's registerWithTaints takes it. */
export interface Taint {
  key: string;
  value: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** formatTaint is a taint as kubectl writes it: key=value:effect. */
export function formatTaint(t: Taint): string {
  return `${t.key}=${t.value}:${t.effect}`;
}

/** containerdConfig is containerd's config for a node in dir: its own root, state, socket and CNI folder, no system path. */
export function containerdConfig(dir: string, pauseImage: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "${dir}/containerd.sock"

[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/containerd/opt"

[${cri}]
  sandbox_image = "${pauseImage}"
  # runc cannot write oom_score_adj below the caller's here: without this every sandbox fails.
  restrict_oom_score_adj = true
  enable_selinux = false

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "${dir}/cni"

[${cri}.registry]
  config_path = "${registryHostsDir(dir)}"
`;
}

/** registryHostsDir is where containerd reads, at each pull, how to reach a registry (a hosts.toml per host). */
export function registryHostsDir(dir: string): string {
  return `${dir}/certs.d`;
}

/** plainHttpRegistryHosts is the hosts.toml that lets containerd pull from a registry on loopback over plain HTTP. */
export function plainHttpRegistryHosts(host: string): string {
  return `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`;
}

/** loopbackCni is a CNI network with the loopback plugin only: the node is network-ready without a bridge, its pods use the host's network. */
export function loopbackCni(): string {
  return JSON.stringify({ cniVersion: '0.4.0', name: 'kevents-loopback', plugins: [{ type: 'loopback' }] });
}

/** kubeletConfig is the KubeletConfiguration of a node in dir, listening on 127.0.0.1:port, with its pods' cgroups under /cgroupRoot. */
export function kubeletConfig(options: { dir: string; cgroupRoot: string; port: number; taint: Taint }): string {
  const { dir, cgroupRoot, port, taint } = options;
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: ${port}
healthzBindAddress: 127.0.0.1
healthzPort: 0
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /${cgroupRoot}
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://${dir}/containerd.sock
podLogsDir: ${dir}/pod-logs
staticPodPath: ""
registerWithTaints:
- {key: ${taint.key}, value: "${taint.value}", effect: ${taint.effect}}
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
nodeStatusUpdateFrequency: 5s
syncFrequency: 5s
fileCheckFrequency: 60s
`;
}
