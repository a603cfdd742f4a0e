import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../internal/index.js';
import { watchFiles } from './file-watch.js';
import type { FileWatch } from './file-watch.js';

/** TlsKeyPair is a PEM certificate chain and its private key. */
export interface TlsKeyPair {
  cert: Buffer;
  key: Buffer;
}

/**
 * loadTlsKeyPair reads `--tls-cert-file` and `--tls-private-key-file` and checks
 * that they make a usable pair (a key that does not match the certificate fails
 * here, with the files named, rather than on the first handshake).
 */
export function loadTlsKeyPair(certFile: string, keyFile: string): TlsKeyPair {
  const read = (path: string, what: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`cannot read ${what} '${path}': ${(e as Error).message}`, { cause: e });
    }
  };
  const pair = { cert: read(certFile, 'TLS certificate file'), key: read(keyFile, 'TLS private key file') };
  try {
    createSecureContext(pair);
  } catch (e) {
    throw new Error(`TLS certificate '${certFile}' and key '${keyFile}' do not make a usable pair: ${(e as Error).message}`, { cause: e });
  }
  return pair;
}

/**
 * watchTlsKeyPair reloads the pair when either file changes and hands it to
 * `onReload` (which swaps the server's secure context: new handshakes use it,
 * open connections keep theirs). A half-written rotation (the new certificate
 * with the old key) is refused and retried when the second file lands.
 */
export function watchTlsKeyPair(options: { certFile: string; keyFile: string; logger: Logger; intervalMs?: number; onReload(pair: TlsKeyPair): void }): FileWatch {
  return watchFiles({
    paths: [options.certFile, options.keyFile],
    logger: options.logger,
    ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
    onChange() {
      options.onReload(loadTlsKeyPair(options.certFile, options.keyFile));
      options.logger.info('TLS certificate reloaded', { certFile: options.certFile });
    },
  });
}
