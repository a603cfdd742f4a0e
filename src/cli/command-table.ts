// The command table: every subcommand's flags (the read commands' in read-command-table.ts), each command's code
// imported only when it runs. Only the shell (run.ts) loads this file; no command imports it, so the defaults the
// commands share live below them in flags/.
import type { Command } from 'commander';
import type { ArchiveStatsFlags } from './commands/archive/stats.js';
import type { ExportFlags } from './commands/export/export.js';
import type { KubeconfigFlags } from './commands/kubeconfig/kubeconfig.js';
import type { LabDirFlags, LabUpFlags } from './commands/lab/lab.js';
import type { MirrorFlags } from './commands/mirror/mirror.js';
import type { RecordFlags } from './commands/record/record.js';
import type { CliIO } from './io.js';
import type { ServeFlags } from './commands/serve/serve.js';
import { addArchiveStatsFlags } from './commands/archive/flags.js';
import { addExportFlags } from './commands/export/flags.js';
import { addKubeconfigFlags } from './commands/kubeconfig/flags.js';
import { addLabUpFlags, withLabDir } from './commands/lab/flags.js';
import { addMirrorFlags } from './commands/mirror/flags.js';
import { addRecordFlags } from './commands/record/flags.js';
import { addServeFlags } from './commands/serve/flags.js';
import { registerReadCommands } from './read-command-table.js';

/** register adds every kevents subcommand to the program; each loads its code only when run. */
export function register(program: Command, io: CliIO): void {
  addServeFlags(
    program
      .command('serve')
      .description('run a Kubernetes-compatible events API server (kubectl, client-go and the official clients accept it)'),
  ).action(async (flags: ServeFlags) => {
    const { runServe } = await import('./commands/serve/serve.js');
    await runServe(flags, io);
  });

  addMirrorFlags(
    program
      .command('mirror')
      .description('archive every event of a cluster, losslessly, with each repeat kept as an occurrence'),
  ).action(async (flags: MirrorFlags) => {
    const { runMirror } = await import('./commands/mirror/mirror.js');
    await runMirror(flags, io);
  });

  addExportFlags(
    program
      .command('export')
      .description("deliver an archive's events to Kafka, OpenSearch/Elasticsearch, Loki, OTLP (OpenTelemetry), NATS JetStream, Alertmanager, Slack, webhooks or JSON lines, per sink as upserts, occurrences or alerts (docs/export.md)"),
  ).action(async (flags: ExportFlags) => {
    const { runExport } = await import('./commands/export/export.js');
    await runExport(flags, io);
  });

  addKubeconfigFlags(
    program
      .command('kubeconfig')
      .description('print a kubeconfig that points kubectl at a running kevents server'),
    io,
  ).action(async (flags: KubeconfigFlags) => {
    const { runKubeconfig } = await import('./commands/kubeconfig/kubeconfig.js');
    await runKubeconfig(flags, io);
  });

  addRecordFlags(
    program
      .command('record')
      .description('record one event about an object, through the recorder (for scripts and CI jobs)'),
  ).action(async (flags: RecordFlags) => {
    const { runRecord } = await import('./commands/record/record.js');
    await runRecord(flags, io);
  });

  const archive = program.command('archive').description("inspect an archive's storage");
  addArchiveStatsFlags(
    archive
      .command('stats')
      .description("what an archive takes on disk, by table and index, per event and per occurrence, and what a retention would free"),
  ).action(async (flags: ArchiveStatsFlags) => {
    const { runArchiveStats } = await import('./commands/archive/stats.js');
    await runArchiveStats(flags, io);
  });

  registerReadCommands(program, io);
  registerLabCommands(program, io);
}

/** registerLabCommands adds `kevents lab`: the events course on a local control plane, with checked exercises. */
function registerLabCommands(program: Command, io: CliIO): void {
  const lab = program
    .command('lab')
    .description('the events lab: a local control plane (real kube-apiserver and scheduler, kwok nodes) with checked exercises');
  addLabUpFlags(
    lab
      .command('up')
      .description('start the lab: etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok nodes and a kevents archive, on 127.0.0.1; with --kubelet a real node too'),
  ).action(async (flags: LabUpFlags) => {
    const { runLabUp } = await import('./commands/lab/lab.js');
    await runLabUp(flags, io);
  });
  withLabDir(lab.command('down').description('stop every program of the lab, the real node\'s containers, mounts and cgroups included, and remove its directory (certificates, logs, etcd data, archive)')).action(async (flags: LabDirFlags) => {
    const { runLabDown } = await import('./commands/lab/lab.js');
    await runLabDown(flags, io);
  });
  withLabDir(lab.command('env').description('print the exports that point kubectl at the lab (KUBECONFIG) and kevents at its archive (KEVENTS_SERVER): eval "$(kevents lab env)"')).action(async (flags: LabDirFlags) => {
    const { runLabEnv } = await import('./commands/lab/lab.js');
    runLabEnv(flags, io);
  });
  withLabDir(lab.command('exercises').description('list the exercises of the course (exercise 6 reads the real node\'s kubelet in a lab started with --kubelet)')).action(async (flags: LabDirFlags) => {
    const { runLabExercises } = await import('./commands/lab/lab.js');
    runLabExercises(flags, io);
  });
  withLabDir(lab.command('exercise').description('print one exercise: the task, the commands to try and what you should see').argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabExercise } = await import('./commands/lab/lab.js');
    runLabExercise(n, flags, io);
  });
  withLabDir(lab.command('check').description("read the lab's events and say what of an exercise is done and what is missing (exit 1 until it is done)").argument('<N>', 'the exercise number')).action(async (n: string, flags: LabDirFlags) => {
    const { runLabCheck } = await import('./commands/lab/lab.js');
    await runLabCheck(n, flags, io);
  });
  withLabDir(lab.command('status').description('the lab\'s addresses and programs, running or not')).action(async (flags: LabDirFlags) => {
    const { runLabStatus } = await import('./commands/lab/lab.js');
    runLabStatus(flags, io);
  });
}
