import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LabError } from './lab-error.js';

/** CERTIFICATE_DAYS is how long the lab's certificates last: a lab is a day's work, and a new `lab up` makes new ones. */
const CERTIFICATE_DAYS = '30';

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') throw new LabError('openssl is needed to make the lab\'s certificates: apt-get install openssl (or brew install openssl)', { cause: e });
    throw new LabError(`openssl ${args[0] ?? ''} failed: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`, { cause: e });
  }
}

/**
 * makeCertificates writes into dir a CA (ca.crt), a serving certificate for
 * 127.0.0.1 and localhost signed by it (serving.crt, serving.key), and the
 * service-account key pair (sa.key, sa.pub).
 */
export function makeCertificates(dir: string): void {
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', CERTIFICATE_DAYS, '-subj', '/CN=kevents-lab-ca']);
  writeFileSync(join(dir, 'serving.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n');
  openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'serving.key', '-out', 'serving.csr', '-subj', '/CN=kube-apiserver']);
  openssl(dir, ['x509', '-req', '-in', 'serving.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'serving.crt', '-days', CERTIFICATE_DAYS, '-extfile', 'serving.ext']);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}
