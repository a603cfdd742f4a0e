import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The builders whose standard output is parsed (scripts/peers.mjs and scripts/sinks.mjs by setup,
 * scripts/helm.mjs by the deploy tests) must print their result alone on standard output, however
 * chatty the tools they run are: Maven writes ANSI resets there even with -q -B, which once broke
 * every cold start. Here go, mvn and javac are stand-ins
 * on PATH that write such bytes to standard output and make the files the real ones would; the
 * builders run on empty caches, so every build step runs.
 */

const scripts = fileURLToPath(new URL('../scripts/', import.meta.url));
const NOISE = '\u001b[0m\u001b[0mnoise on stdout\n';

const ESC_NOISE = NOISE.replace(/\u001b/g, '\\033');

// A stand-in for go: `version`, `mod download -json` (a go.mod with one staging module; the real one
// prints its JSON alone, which the builder parses), `build -o OUT`, and `install` into GOBIN.
const GO_STUB = `#!/bin/sh
case "$1" in
  version) echo "go version go1.26 stub" ;;
  mod) printf 'module k8s.io/kubernetes\\n\\ngo 1.24\\n\\nrequire (\\n\\tk8s.io/api v0.0.0\\n)\\n' > "$STUB_DIR/kubernetes.mod"
       printf '{"GoMod": "%s"}\\n' "$STUB_DIR/kubernetes.mod" ;;
  build) printf '${ESC_NOISE}'; while [ "$1" != "-o" ]; do shift; done; printf '#!/bin/sh\\n' > "$2"; chmod +x "$2" ;;
  install) printf '${ESC_NOISE}'; for a; do pkg="$a"; done; name=$(basename "\${pkg%@*}"); mkdir -p "$GOBIN"; printf '#!/bin/sh\\n' > "$GOBIN/$name"; chmod +x "$GOBIN/$name" ;;
esac
`;

// A stand-in for mvn dependency:copy-dependencies: the jars the builders check for, in -DoutputDirectory.
const MVN_STUB = `#!/bin/sh
printf '${ESC_NOISE}'
for a; do case "$a" in -DoutputDirectory=*) out="\${a#-DoutputDirectory=}" ;; esac; done
mkdir -p "$out" && touch "$out/kafka_2.13-3.9.1.jar" "$out/opensearch-2.19.6.jar"
`;

// A stand-in for javac -d CLASSES: the launcher's class file.
const JAVAC_STUB = `#!/bin/sh
printf '${ESC_NOISE}'
while [ "$1" != "-d" ]; do shift; done; mkdir -p "$2" && touch "$2/KeventsOpenSearch.class"
`;

// A stand-in for npm install (run in the folder it installs into): the native module the builder checks for.
const NPM_STUB = `#!/bin/sh
printf '${ESC_NOISE}'
mkdir -p node_modules/@confluentinc/kafka-javascript/build/Release && touch node_modules/@confluentinc/kafka-javascript/build/Release/confluent-kafka-javascript.node
`;

function stub(dir: string, name: string, text: string): void {
  writeFileSync(join(dir, name), text);
  chmodSync(join(dir, name), 0o755);
}

void describe('the setup builders keep their standard output for JSON', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kevents-builders-'));
    stub(dir, 'go', GO_STUB);
    stub(dir, 'mvn', MVN_STUB);
    stub(dir, 'javac', JAVAC_STUB);
    stub(dir, 'npm', NPM_STUB);
    env = {
      ...process.env,
      PATH: `${dir}:${process.env.PATH ?? ''}`,
      GO: join(dir, 'go'),
      STUB_DIR: dir,
      KEVENTS_PEERS_CACHE: join(dir, 'peers'),
      KEVENTS_SINKS_CACHE: join(dir, 'sinks'),
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('peers.mjs --json builds on an empty cache and prints JSON only; go wrote to the log', () => {
    const log = join(dir, 'peers.log');
    const r = spawnSync(process.execPath, [join(scripts, 'peers.mjs'), '--json', '--only', 'kube-apiserver,kwok', '--log', log], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(existsSync(out['kube-apiserver']), 'the stand-in go build made the binary');
    assert.ok(existsSync(out.kwok), 'the stand-in go install made kwok');
    assert.match(readFileSync(log, 'utf8'), /noise on stdout/);
    assert.match(r.stderr, new RegExp(`output in ${log.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  it('sinks.mjs --json fetches on an empty cache and prints JSON only; mvn, javac and go wrote to the log', () => {
    const log = join(dir, 'sinks.log');
    const r = spawnSync(process.execPath, [join(scripts, 'sinks.mjs'), '--json', '--only', 'kafka,victorialogs,opensearch', '--log', log], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['kafka', 'opensearch', 'victorialogs']);
    const text = readFileSync(log, 'utf8');
    for (const cmd of ['mvn', 'javac', 'go install', 'npm install']) assert.ok(text.includes(`&& ${cmd}`), `${cmd} ran with its output in the log`);
    assert.equal(text.match(/noise on stdout/g)?.length, 5, 'two mvn runs, javac, go install and npm install');
    assert.ok(existsSync(join(out.kafka.nodePath, '@confluentinc', 'kafka-javascript')), 'the librdkafka client is in the folder named for NODE_PATH');
  });

  it('helm.mjs builds helm on an empty cache and prints its path only; go wrote to the log', () => {
    const log = join(dir, 'helm.log');
    const r = spawnSync(process.execPath, [join(scripts, 'helm.mjs'), '--cache', join(dir, 'helm'), '--log', log], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const path = r.stdout.trim();
    assert.equal(r.stdout, `${path}\n`);
    assert.ok(existsSync(path) && path.endsWith('/bin/helm'), path);
    assert.match(readFileSync(log, 'utf8'), /noise on stdout/);
  });

  it('a failing child names its command and the log on standard error, and leaves standard output empty', () => {
    stub(dir, 'failing-go', '#!/bin/sh\n[ "$1" = version ] && exit 0\necho "compile error: missing symbol"; exit 3\n');
    const log = join(dir, 'failing.log');
    const r = spawnSync(process.execPath, [join(scripts, 'peers.mjs'), '--json', '--only', 'kwok', '--log', log, '--cache', join(dir, 'failing-cache')], {
      env: { ...env, GO: join(dir, 'failing-go') },
      encoding: 'utf8',
    });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /peers: .*failing-go install .* exited with 3; its output is in .*failing\.log, ending:\ncompile error: missing symbol/);
  });

  it("setup reports a builder's failure, or stray bytes before its JSON, in one line naming the builder and its log", () => {
    const fake = join(dir, 'fake-scripts');
    spawnSync('mkdir', ['-p', fake]);
    const runBuilder = (body: string) => {
      writeFileSync(join(fake, 'sinks.mjs'), body);
      const code = `import { runBuilder } from ${JSON.stringify(join(scripts, 'setup.mjs'))};
try { runBuilder('sinks.mjs', { quiet: true, scriptsDir: ${JSON.stringify(fake)}, log: '/var/log/kevents-x.log' }); console.log('parsed'); }
catch (e) { console.log(e.message); }`;
      return spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }).stdout.trim();
    };
    assert.equal(runBuilder("process.stdout.write('\\u001b[0m{\"kafka\":{}}')"), 'scripts/sinks.mjs (the sink servers) printed something other than JSON on standard output ("\\u001b[0m{\\"kafka\\":{}}"…); its build log is /var/log/kevents-x.log');
    assert.equal(runBuilder('process.exit(1)'), 'scripts/sinks.mjs (the sink servers) failed (exit 1); its build log is /var/log/kevents-x.log');
    assert.equal(runBuilder("process.stdout.write(JSON.stringify({ kafka: {} }))"), 'parsed');
  });
});
