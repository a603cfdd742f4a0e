import type { Registry } from 'prom-client';
import { explainEvent } from '../../diagnosis/index.js';
import { createExporter, isConfigError, loadExportConfig } from '../../export/index.js';
import type { ExportConfig, Exporter } from '../../export/index.js';
import { realClock } from '../../internal/index.js';
import type { Logger } from '../../internal/index.js';
import type { ExportLog, LeaseTable } from '../../storage/index.js';
import { CliError, UsageError } from '../errors.js';
import type { StorageSpec } from '../flags/storage.js';
import { withPasswordHint } from '../flags/storage-password.js';

/** ExportRun is a running exporter that reloads its config on SIGHUP. */
export interface ExportRun {
  exporter: Exporter;
  /** sinks names the configured sinks, for messages. */
  sinks: string[];
  stop(): Promise<void>;
}

/**
 * startExport composes the exporter of `--config`/`--sinks FILE` over an
 * archive: the archive's export log (the one place that names its classes), the
 * config, the failure catalogue's cause sentence for alerts, and a SIGHUP handler that reloads the config (a config with errors
 * is logged and the running one kept).
 */
export async function startExport(spec: StorageSpec, configFile: string, deps: { logger: Logger; registry?: Registry; flag: string }): Promise<ExportRun> {
  if (spec.kind !== 'sqlite' && spec.kind !== 'postgres') {
    throw new UsageError(`${deps.flag} needs an archive in SQLite (sqlite:PATH) or PostgreSQL (postgres://…); a ${spec.kind} store keeps no export log`);
  }
  const config = await readExportConfig(configFile);
  const log = await openExportLog(spec);
  let exporter: Exporter;
  try {
    // The alert policy's messages say why (the catalogue's sentence), which export cannot import on its own.
    exporter = createExporter({ log, config, clock: realClock, logger: deps.logger, explain: explainEvent, ...(deps.registry !== undefined ? { registry: deps.registry } : {}) });
  } catch (e) {
    await log.close();
    throw new CliError(`cannot start the sinks: ${(e as Error).message}`, { cause: e });
  }
  exporter.start();
  let reloading = Promise.resolve();
  const onHup = (): void => {
    reloading = reloading.then(async () => {
      try {
        const next = await loadExportConfig(configFile);
        await exporter.reload(next);
        deps.logger.info('export: config reloaded', { file: configFile, sinks: next.sinks.map((s) => s.name).join(',') });
      } catch (e) {
        deps.logger.error('export: the config was not reloaded; the running one stays', { file: configFile, error: (e as Error).message });
      }
    });
  };
  process.on('SIGHUP', onHup);
  return {
    exporter,
    sinks: config.sinks.map((s) => s.name),
    async stop() {
      process.off('SIGHUP', onHup);
      await reloading;
      await exporter.stop();
      await log.close();
    },
  };
}

/** readExportConfig reads an export config, a config with errors as a CliError that lists them by line and column. */
export async function readExportConfig(configFile: string): Promise<ExportConfig> {
  try {
    return await loadExportConfig(configFile);
  } catch (e) {
    if (isConfigError(e)) throw new CliError(`invalid export config:\n${e.message}`, { cause: e });
    throw e;
  }
}

/** openLeaseTable opens the lease table of a PostgreSQL archive, where exporters that share no cluster elect their leader. */
export async function openLeaseTable(spec: Extract<StorageSpec, { kind: 'postgres' }>): Promise<LeaseTable> {
  const { PostgresLeaseTable } = await import('../../storage/postgres/index.js');
  try {
    return await PostgresLeaseTable.open({ connectionString: spec.url });
  } catch (e) {
    throw new CliError(withPasswordHint((e as Error).message), { cause: e });
  }
}

/** openExportLog opens the export log of an SQLite or PostgreSQL archive, a failure as a one-line CliError; each backend loads only when asked for. */
export async function openExportLog(spec: Extract<StorageSpec, { kind: 'sqlite' | 'postgres' }>): Promise<ExportLog> {
  try {
    if (spec.kind === 'postgres') {
      const { PostgresExportLog } = await import('../../storage/postgres/index.js');
      return await PostgresExportLog.open({ connectionString: spec.url });
    }
    const path = await import('node:path');
    const { SqliteExportLog } = await import('../../storage/sqlite/index.js');
    return new SqliteExportLog({ path: path.resolve(spec.path) });
  } catch (e) {
    throw new CliError(withPasswordHint((e as Error).message), { cause: e });
  }
}
