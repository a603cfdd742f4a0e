// kevents archive stats: what an archive's data takes, by table and index, per event and per occurrence, and what
// a retention would free. Flags -> options -> run, the printer apart.
import { noopLogger, realClock } from '../../../internal/index.js';
import { hasSizeReport } from '../../../storage/index.js';
import { openStore } from '../../daemon/open-store.js';
import { CliError, UsageError } from '../../errors.js';
import { parseGoDuration } from '../../flags/duration.js';
import { describeStorage, parseStorageSpec } from '../../flags/storage.js';
import type { StorageSpec } from '../../flags/storage.js';
import { withStoragePassword } from '../../flags/storage-password.js';
import type { CliIO } from '../../io.js';
import { printArchiveStats } from './printer.js';
import type { ArchiveStatsOutput } from './printer.js';

/** ArchiveStatsFlags are the flags of `kevents archive stats` as commander reads them. */
export interface ArchiveStatsFlags {
  storage: string;
  storagePasswordFile?: string;
  retention?: string;
  output: string;
}

/** ArchiveStatsOptions are the checked flags. */
export interface ArchiveStatsOptions {
  spec: StorageSpec;
  retentionMs?: number;
  output: ArchiveStatsOutput;
}

/** archiveStatsOptions checks the flags before the archive is opened. */
export function archiveStatsOptions(flags: ArchiveStatsFlags, warn: (line: string) => void): ArchiveStatsOptions {
  if (flags.output !== 'table' && flags.output !== 'json') throw new UsageError(`-o must be table or json, not ${JSON.stringify(flags.output)}`);
  const spec = withStoragePassword(parseStorageSpec(flags.storage), { urlFlag: '--storage', file: flags.storagePasswordFile, warn });
  if (spec.kind === 'memory') throw new UsageError('--storage memory: keeps nothing to measure; name an archive (sqlite:PATH or postgres://…)');
  const out: ArchiveStatsOptions = { spec, output: flags.output };
  if (flags.retention !== undefined) {
    try {
      out.retentionMs = parseGoDuration(flags.retention);
    } catch (e) {
      throw new UsageError(`--retention ${flags.retention}: ${(e as Error).message}`);
    }
    if (out.retentionMs <= 0) throw new UsageError(`--retention ${flags.retention}: give an age above zero`);
  }
  return out;
}

/** runArchiveStats measures the archive and prints the report. */
export async function runArchiveStats(flags: ArchiveStatsFlags, io: CliIO): Promise<void> {
  const o = archiveStatsOptions(flags, (line) => io.stderr.write(`${line}\n`));
  const store = await openStore(o.spec, { clock: realClock, logger: noopLogger });
  try {
    if (!hasSizeReport(store)) throw new CliError(`${describeStorage(o.spec)} does not report its size`);
    const report = await store.sizeReport(o.retentionMs !== undefined ? { retentionCutoffMs: Date.now() - o.retentionMs } : {});
    printArchiveStats(report, o.output, describeStorage(o.spec), io.stdout);
  } finally {
    await store.close();
  }
}
