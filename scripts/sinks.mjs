#!/usr/bin/env node
// Sets up the servers the export tests and benches deliver to, outside the
// repository, keyed by version, and prints where they are:
//   Apache Kafka (KRaft): the broker's jars from Maven Central (mvn dependency:copy-dependencies)
//   Grafana Loki: built from its Go module (go mod download, go build ./cmd/loki)
//   NATS: nats-server from Debian (apt-get install nats-server), found on PATH
// Idempotent: what is already in the cache is reused. Usage:
//   node scripts/sinks.mjs [--json] [--only kafka,loki,nats]
// Cache: $KEVENTS_SINKS_CACHE, default ~/.cache/kevents-sinks.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const KAFKA_VERSION = '3.9.1';
const KAFKA_SCALA = '2.13';
const SLF4J_VERSION = '1.7.36';
const LOKI_VERSION = '3.7.8';

const args = process.argv.slice(2);
const json = args.includes('--json');
const onlyArg = args.find((a) => a.startsWith('--only'));
// Loki is set up only when asked for (--only loki): its build from the module does not work yet (see docs/export.md).
const only = onlyArg === undefined ? ['kafka', 'nats'] : (onlyArg.includes('=') ? onlyArg.split('=')[1] : args[args.indexOf(onlyArg) + 1]).split(',');
const cache = process.env.KEVENTS_SINKS_CACHE ?? join(homedir(), '.cache', 'kevents-sinks');
const log = (line) => process.stderr.write(`sinks: ${line}\n`);

function run(cmd, argv, cwd) {
  const r = spawnSync(cmd, argv, { cwd, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, GOFLAGS: process.env.GOFLAGS ?? '-mod=mod' } });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited with ${r.status}`);
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function kafka() {
  const dir = join(cache, `kafka-${KAFKA_VERSION}`);
  const libs = join(dir, 'libs');
  const done = join(dir, '.complete');
  if (!existsSync(done)) {
    if (which('mvn') === undefined) throw new Error('kafka needs Maven (apt-get install maven) and Java 17');
    log(`kafka ${KAFKA_VERSION}: fetching the broker's jars from Maven Central into ${libs}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.kevents</groupId><artifactId>kafka-server</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_${KAFKA_SCALA}</artifactId><version>${KAFKA_VERSION}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>${SLF4J_VERSION}</version></dependency>
  </dependencies>
</project>
`,
    );
    run('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${libs}`, '-DincludeScope=runtime'], dir);
    writeFileSync(done, `${new Date().toISOString()}\n`);
  }
  if (!readdirSync(libs).some((f) => f === `kafka_${KAFKA_SCALA}-${KAFKA_VERSION}.jar`)) throw new Error(`${libs} lacks the Kafka jar: remove ${dir} and run again`);
  return { version: KAFKA_VERSION, classpath: `${libs}/*`, java: which('java') ?? 'java' };
}

function loki() {
  const dir = join(cache, `loki-${LOKI_VERSION}`);
  const bin = join(dir, 'bin', 'loki');
  if (!existsSync(bin)) {
    if (which('go') === undefined) throw new Error('loki is built from its Go module: install Go 1.24 or later');
    log(`loki ${LOKI_VERSION}: building from the Go module github.com/grafana/loki/v3 (several minutes)`);
    mkdirSync(dir, { recursive: true });
    const r = spawnSync('go', ['mod', 'download', '-json', `github.com/grafana/loki/v3@v${LOKI_VERSION}`], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`go mod download: ${r.stderr}`);
    const src = join(dir, 'src');
    rmSync(src, { recursive: true, force: true });
    cpSync(JSON.parse(r.stdout).Dir, src, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', src]);
    run('go', ['build', '-o', bin, './cmd/loki'], src);
    chmodSync(bin, 0o755);
  }
  return { version: LOKI_VERSION, bin };
}

function nats() {
  // Debian installs it in /usr/sbin, which is not on every user's PATH.
  const bin = which('nats-server') ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined);
  if (bin === undefined) throw new Error('nats needs the Debian package nats-server (apt-get install nats-server)');
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return { version: v.replace(/^nats-server:\s*v?/, ''), bin };
}

const setups = { kafka, loki, nats };
const out = {};
let failed = false;
for (const name of only) {
  const setup = setups[name];
  if (setup === undefined) {
    log(`unknown server ${name} (kafka, loki, nats)`);
    process.exit(2);
  }
  try {
    out[name] = setup();
  } catch (e) {
    failed = true;
    log(`${name}: ${e.message}`);
  }
}
if (json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
else for (const [name, v] of Object.entries(out)) process.stdout.write(`${name} ${v.version}: ${v.bin ?? v.classpath}\n`);
process.exit(failed ? 1 : 0);
