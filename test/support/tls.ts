import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** TestCertificates are a fresh CA and a server certificate it signed, as files. */
export interface TestCertificates {
  dir: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * makeCertificates has openssl write a CA and a server certificate for
 * 127.0.0.1, ::1 and localhost into `dir` (a fresh temporary folder by default),
 * under the file names `prefix`ca.crt, `prefix`server.crt and `prefix`server.key.
 */
export function makeCertificates(options: { dir?: string; prefix?: string; commonName?: string } = {}): TestCertificates {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'kevents-tls-'));
  const p = options.prefix ?? '';
  const caKey = join(dir, `${p}ca.key`);
  const caFile = join(dir, `${p}ca.crt`);
  const keyFile = join(dir, `${p}server.key`);
  const csr = join(dir, `${p}server.csr`);
  const certFile = join(dir, `${p}server.crt`);
  const ext = join(dir, `${p}server.ext`);
  const run = (args: string[]): void => void execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', caKey, '-out', caFile, '-days', '2', '-subj', `/CN=${options.commonName ?? 'kevents-test-ca'}`]);
  run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', '/CN=kevents']);
  writeFileSync(ext, 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  run(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', certFile, '-days', '2', '-extfile', ext]);
  return { dir, caFile, certFile, keyFile };
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** ca writes a CA `name`.crt/.key. */
export function ca(dir: string, name: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`]);
}

/** leaf writes `name`.crt/.key for `subject`, signed by the CA `caName` (its files in `caDir`), with an extension file's text. */
export function leaf(dir: string, name: string, subject: string, caDir: string, caName: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', join(caDir, `${caName}.crt`), '-CAkey', join(caDir, `${caName}.key`), '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
}

/** CLIENT_EXT makes a leaf a client certificate. */
export const CLIENT_EXT = 'extendedKeyUsage=clientAuth\n';
