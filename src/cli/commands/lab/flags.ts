// The flags of `kevents lab` and its subcommands, apart from lab.ts so that the command table can add them without
// loading the lab.
import type { Command } from 'commander';

/** withLabDir adds --dir, the lab's state directory, which every lab subcommand that touches the lab takes. */
export function withLabDir(c: Command): Command {
  return c.option('--dir <path>', 'the lab\'s state directory (default $KEVENTS_LAB_DIR or ~/.kevents/lab)');
}

/** addLabUpFlags adds the options of `kevents lab up` (read into LabUpFlags), --dir last as the other lab commands have it. */
export function addLabUpFlags(c: Command): Command {
  return withLabDir(
    c
      .option('--nodes <n>', 'how many kwok nodes', '3')
      .option('--node-cpu <quantity>', 'allocatable CPU of each node', '2')
      .option('--node-memory <quantity>', 'allocatable memory of each node', '4Gi')
      .option('--event-ttl <duration>', 'kube-apiserver --event-ttl: how long the cluster keeps an event after its last write', '1h')
      .option('--kubelet', 'add a real node, real-1: a kubelet and containerd on this machine (root), tainted so only pods that tolerate it land there; exercise 6 then reads its events')
      .option('--bin-dir <path>', 'look for etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok (and the kubelet) here first')
      .option('--no-build', 'never build missing binaries with go'),
  );
}
