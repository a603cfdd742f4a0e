#!/usr/bin/env node
// Sets up the servers the export tests and benches deliver to, outside the
// repository, keyed by version, and prints where they are:
//   Apache Kafka (KRaft): the broker's jars from Maven Central (mvn dependency:copy-dependencies)
//   VictoriaLogs: built from its Go module (go install …/app/victoria-logs@v…); it speaks Loki's push API
//     (Grafana Loki itself is AGPL-licensed, which kevents may not use: see docs/export.md, "loki")
//   the Kafka sink's librdkafka client (@confluentinc/kafka-javascript from npm, its native part built
//     here: its prebuilt binaries come from outside the registries), into a folder of its own that the
//     tests and benches put on NODE_PATH, so `npm ci` never rebuilds it
//   NATS: nats-server from Debian (apt-get install nats-server), found on PATH
//   OpenSearch: a single node from OpenSearch's own modules on Maven Central (the server, the Netty4
//     HTTP transport, analysis-common), started by a small launcher of ours compiled here with javac
// Idempotent: what is already in the cache is reused. Usage:
//   node scripts/sinks.mjs [--json] [--only kafka,nats,victorialogs,opensearch] [--log FILE]
// Standard output carries only the result: what mvn, javac and go print goes to the log file
// (default CACHE/build.log), named in the error when a step fails.
// Cache: $KEVENTS_SINKS_CACHE, default ~/.cache/kevents-sinks.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { logArg, runLogged, withLock } from './builder-io.mjs';

const KAFKA_VERSION = '3.9.1';
const KAFKA_SCALA = '2.13';
const SLF4J_VERSION = '1.7.36';
const VICTORIALOGS_VERSION = '1.52.2';
const OPENSEARCH_VERSION = '2.19.6';
const LOG4J_VERSION = '2.25.4';
const LIBRDKAFKA_JS_VERSION = '1.10.1';

const args = process.argv.slice(2);
const json = args.includes('--json');
const onlyArg = args.find((a) => a.startsWith('--only'));
const only = onlyArg === undefined ? ['kafka', 'nats', 'victorialogs', 'opensearch'] : (onlyArg.includes('=') ? onlyArg.split('=')[1] : args[args.indexOf(onlyArg) + 1]).split(',');
const cache = process.env.KEVENTS_SINKS_CACHE ?? join(homedir(), '.cache', 'kevents-sinks');
const buildLog = logArg(args, join(cache, 'build.log'));
const log = (line) => process.stderr.write(`sinks: ${line}\n`);

function run(cmd, argv, cwd, env = { GOFLAGS: process.env.GOFLAGS ?? '-mod=mod' }) {
  runLogged(cmd, argv, { cwd, env: { ...process.env, ...env }, log: buildLog });
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
    log(`kafka ${KAFKA_VERSION}: fetching the broker's jars from Maven Central into ${libs} (output in ${buildLog})`);
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
  const client = librdkafkaClient();
  return { version: KAFKA_VERSION, classpath: `${libs}/*`, java: which('java') ?? 'java', ...(client === undefined ? {} : { nodePath: client }) };
}

/**
 * librdkafkaClient installs @confluentinc/kafka-javascript into the cache and returns its
 * node_modules folder (for NODE_PATH). Its native build links librdkafka (built from the
 * package's own sources) against the system's OpenSSL and zlib (CKJS_LINKING=dynamic: the static
 * build downloads their sources from outside the registries). A failed build leaves the Kafka
 * sink's tests on kafkajs alone, with the reason logged.
 */
function librdkafkaClient() {
  const dir = join(cache, `kafka-javascript-${LIBRDKAFKA_JS_VERSION}`);
  const modules = join(dir, 'node_modules');
  const done = join(dir, '.complete');
  if (!existsSync(done)) {
    log(`@confluentinc/kafka-javascript ${LIBRDKAFKA_JS_VERSION}: building its native part into ${dir} (output in ${buildLog})`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "name": "kevents-librdkafka", "private": true }\n');
    try {
      run('npm', ['install', '--no-audit', '--no-fund', '--no-save', `@confluentinc/kafka-javascript@${LIBRDKAFKA_JS_VERSION}`], dir, { CKJS_LINKING: 'dynamic' });
    } catch (e) {
      log(`@confluentinc/kafka-javascript: ${e.message.split('\n')[0]} (the Kafka sink tests use kafkajs only)`);
      return undefined;
    }
    writeFileSync(done, `${new Date().toISOString()}\n`);
  }
  return existsSync(join(modules, '@confluentinc', 'kafka-javascript', 'build', 'Release', 'confluent-kafka-javascript.node')) ? modules : undefined;
}

function victorialogs() {
  const dir = join(cache, `victorialogs-${VICTORIALOGS_VERSION}`);
  const bin = join(dir, 'bin', 'victoria-logs');
  if (!existsSync(bin)) {
    if (which('go') === undefined) throw new Error('victorialogs is built from its Go module: install Go 1.26 or later');
    log(`victorialogs ${VICTORIALOGS_VERSION}: building from the Go module github.com/VictoriaMetrics/VictoriaLogs into ${dir}/bin (output in ${buildLog})`);
    mkdirSync(dir, { recursive: true });
    // The module has no replace directives, so go install builds it as published (pure Go, no cgo).
    run('go', ['install', '-trimpath', '-ldflags=-s -w', `github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v${VICTORIALOGS_VERSION}`], dir, {
      GOBIN: join(dir, 'bin'),
      CGO_ENABLED: '0',
      GOFLAGS: '',
      GOTOOLCHAIN: 'local',
    });
  }
  return { version: VICTORIALOGS_VERSION, bin };
}

function nats() {
  // Debian installs it in /usr/sbin, which is not on every user's PATH.
  const bin = which('nats-server') ?? (existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined);
  if (bin === undefined) throw new Error('nats needs the Debian package nats-server (apt-get install nats-server)');
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return { version: v.replace(/^nats-server:\s*v?/, ''), bin };
}

// The OpenSearch distribution is not on Maven Central, its modules are: Node has a constructor taking
// plugins from the classpath (what OpenSearch's own test framework uses), so this launcher starts a real
// node with the Netty4 HTTP transport and analysis-common. Security is a separate plugin: none here.
const OPENSEARCH_LAUNCHER = `import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;

/** Runs a single-node OpenSearch, plugins from the classpath. Usage: KeventsOpenSearch HOME HTTP_PORT TRANSPORT_PORT */
public final class KeventsOpenSearch {
  static final class ClasspathNode extends Node {
    ClasspathNode(Environment env) {
      super(env, List.of(org.opensearch.transport.Netty4Plugin.class, org.opensearch.analysis.common.CommonAnalysisPlugin.class), true);
    }
  }

  public static void main(String[] args) throws Exception {
    Path home = Path.of(args[0]).toAbsolutePath();
    Settings settings = Settings.builder()
        .put("cluster.name", "kevents-test")
        .put("node.name", "kevents")
        .put("path.home", home.toString())
        .put("path.data", home.resolve("data").toString())
        .put("path.logs", home.resolve("logs").toString())
        .put("network.host", "127.0.0.1")
        .put("http.port", args[1])
        .put("transport.port", args[2])
        .put("discovery.type", "single-node")
        .put("cluster.routing.allocation.disk.threshold_enabled", false)
        .build();
    Environment env = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), home.resolve("config"), () -> "kevents");
    Node node = new ClasspathNode(env);
    node.start();
    System.out.println("kevents-opensearch: started on 127.0.0.1:" + args[1]);
    new CountDownLatch(1).await();
  }
}
`;

function opensearch() {
  const dir = join(cache, `opensearch-${OPENSEARCH_VERSION}`);
  const libs = join(dir, 'libs');
  const classes = join(dir, 'launcher', 'classes');
  const done = join(dir, '.complete');
  if (!existsSync(done)) {
    if (which('mvn') === undefined || which('javac') === undefined) throw new Error('opensearch needs Maven (apt-get install maven) and a Java 17 JDK');
    log(`opensearch ${OPENSEARCH_VERSION}: fetching the server's modules from Maven Central into ${libs} (output in ${buildLog})`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.kevents</groupId><artifactId>opensearch-server</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.opensearch</groupId><artifactId>opensearch</artifactId><version>${OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>transport-netty4-client</artifactId><version>${OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.opensearch.plugin</groupId><artifactId>analysis-common</artifactId><version>${OPENSEARCH_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>${LOG4J_VERSION}</version></dependency>
  </dependencies>
</project>
`,
    );
    run('mvn', ['-q', '-B', 'dependency:copy-dependencies', `-DoutputDirectory=${libs}`, '-DincludeScope=runtime'], dir);
    const src = join(dir, 'launcher', 'src');
    mkdirSync(src, { recursive: true });
    mkdirSync(classes, { recursive: true });
    writeFileSync(join(src, 'KeventsOpenSearch.java'), OPENSEARCH_LAUNCHER);
    run('javac', ['-cp', `${libs}/*`, '-d', classes, join(src, 'KeventsOpenSearch.java')], dir);
    writeFileSync(done, `${new Date().toISOString()}\n`);
  }
  if (!existsSync(join(libs, `opensearch-${OPENSEARCH_VERSION}.jar`)) || !existsSync(join(classes, 'KeventsOpenSearch.class'))) {
    throw new Error(`${dir} lacks the OpenSearch jar or the launcher: remove ${dir} and run again`);
  }
  return { version: OPENSEARCH_VERSION, classpath: `${classes}:${libs}/*`, java: which('java') ?? 'java', main: 'KeventsOpenSearch' };
}

const setups = { kafka, nats, victorialogs, opensearch };
const out = {};
let failed = false;
for (const name of only) {
  const setup = setups[name];
  if (setup === undefined) {
    log(`unknown server ${name} (kafka, nats, victorialogs, opensearch)`);
    process.exit(2);
  }
  try {
    // One lock for the whole cache: preparers started together (parallel test runs, several
    // checkouts on one machine) build each server once, and a build is never raced into a broken folder.
    out[name] = withLock(cache, setup);
  } catch (e) {
    failed = true;
    log(`${name}: ${e.message}`);
  }
}
if (json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
else for (const [name, v] of Object.entries(out)) process.stdout.write(`${name} ${v.version}: ${v.bin ?? v.classpath}\n`);
process.exit(failed ? 1 : 0);
