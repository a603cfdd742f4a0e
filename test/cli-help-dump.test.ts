import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLI } from './support/server-process.js';

const script = fileURLToPath(new URL('../scripts/cli-dump.mjs', import.meta.url));
const golden = fileURLToPath(new URL('golden/cli-help.txt', import.meta.url));

function dump(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, '-'], { maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${script} failed: ${stderr}`, { cause: error }));
      else resolve(stdout);
    });
  });
}

void describe('the CLI help dump (scripts/cli-dump.mjs)', () => {
  void it('is byte for byte test/golden/cli-help.txt: every help page, usage error and exit code', async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run "npm run build" first`);
    const text = await dump();
    // Each invocation is named in the dump, so a difference points at the command whose words changed.
    assert.equal(text, readFileSync(golden, 'utf8'), 'a deliberate change regenerates the file: node scripts/cli-dump.mjs test/golden/cli-help.txt');
  });

  void it('covers every command: each subcommand listed on a help page has a help page of its own in the dump', () => {
    const text = readFileSync(golden, 'utf8');
    for (const name of ['serve', 'mirror', 'export', 'record', 'get', 'events', 'timeline', 'incidents', 'search', 'lint', 'archive stats', 'lab up', 'lab check']) {
      assert.match(text, new RegExp(`^\\$ kevents ${name} --help\\nexit: 0\\n`, 'm'), name);
    }
    assert.match(text, /^\$ kubectl-kevents timeline --output no-such-value\nexit: 2\n/m);
  });
});
