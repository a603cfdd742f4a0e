// What a real node leaves on the host beyond its own processes: shims and containers that outlive containerd,
// cgroups, mounts. Each is found from the node's folder or its cgroup root, so a node is undone from its recorded
// state alone, by another process than the one that started it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

/** cgroupHierarchies are the mount points of the cgroup (v1) hierarchies, or the one v2 mount. */
export function cgroupHierarchies(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.includes('cgroup') || f.includes('cgroup2'))
    .map((f) => f[4]!)
    .filter((p) => p.startsWith('/sys/fs/cgroup'));
}

/** rmCgroupTree removes a cgroup folder and those below it, deepest first (a cgroup is removed with rmdir only). */
export function rmCgroupTree(path: string): void {
  if (!existsSync(path)) return;
  for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) rmCgroupTree(join(path, entry.name));
  try {
    rmdirSync(path);
  } catch {
    // A process still in it (it was killed just now): the node's next stop gets it.
  }
}

/** mountsUnder are the mount points at or below dir, deepest first. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && (p === dir || p.startsWith(`${dir}/`)))
    .reverse();
}

/** unmountUnder lazily unmounts everything at or below dir. */
export function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
}

/** processesMentioning are the live pids whose command line names dir: the shims and containers a node started. */
export function processesMentioning(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(dir) && !exited(Number(name))) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** exited tells a zombie (killed, not reaped yet by its parent) from a live process. */
function exited(pid: number): boolean {
  try {
    return /^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

/** killMentioning kills, at once, the processes whose command line names dir. */
export function killMentioning(dir: string): void {
  for (const pid of processesMentioning(dir)) kill(pid);
}

/** processesInCgroups are the pids in a cgroup root's tree, in every hierarchy: the containers, which name no folder of the node. */
export function processesInCgroups(cgroupRoot: string): number[] {
  const pids: number[] = [];
  const visit = (path: string): void => {
    if (!existsSync(path)) return;
    try {
      for (const pid of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) pids.push(Number(pid));
      for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) visit(join(path, entry.name));
    } catch {
      // Removed meanwhile.
    }
  };
  for (const h of cgroupHierarchies()) visit(join(h, cgroupRoot));
  return [...new Set(pids)].filter((pid) => !exited(pid));
}

/** killInCgroups kills every process in a cgroup root's tree. */
export function killInCgroups(cgroupRoot: string): void {
  for (const pid of processesInCgroups(cgroupRoot)) kill(pid);
}

/**
 * abandonRealNode kills, synchronously, what a node left running under dir or in its cgroups, and lifts its mounts:
 * for an exit handler, where no stop can be awaited. stopRealNode is the whole undoing.
 */
export function abandonRealNode(node: { dir: string; cgroupRoot: string }): void {
  killMentioning(node.dir);
  killInCgroups(node.cgroupRoot);
  unmountUnder(node.dir);
}

/** otherKubeletRuns tells whether a kubelet not named in dir runs on this host (the host paths it shares stay then). */
export function otherKubeletRuns(dir: string): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'kubelet') continue;
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(dir) && !exited(Number(name))) return true;
    } catch {
      // Gone meanwhile.
    }
  }
  return false;
}
