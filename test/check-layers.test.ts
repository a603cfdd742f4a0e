import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../scripts/check-layers.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kevents-layers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function check(files: Record<string, string>): { status: number | null; out: string } {
  const src = mkdtempSync(join(dir, 'src-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  const r = spawnSync(process.execPath, [script, src], { encoding: 'utf8' });
  return { status: r.status, out: r.stderr };
}

void describe('scripts/check-layers.mjs (ARCHITECTURE.md module table)', () => {
  void it('passes the project tree', () => {
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  });

  void it('refuses an import the table does not allow, naming the file and the rule', () => {
    const r = check({
      'api/index.ts': 'export const a = 1;\n',
      'timeline/index.ts': "export { x } from './x.js';\n",
      'timeline/x.ts': 'export const x = 1;\n',
      'diagnosis/index.ts': "import { x } from '../timeline/index.js';\nexport const y = x;\n",
      'timeline/bad.ts': "import { y } from '../diagnosis/index.js';\nexport const z = y;\n",
    });
    assert.equal(r.status, 1);
    assert.match(r.out, /timeline\/bad\.ts: imports \.\.\/diagnosis\/index\.js: timeline\/ may not import diagnosis\//);
    assert.doesNotMatch(r.out, /diagnosis\/index\.ts/, 'diagnosis/ may import timeline/');
  });

  void it('refuses a module reached past its index.ts, and a backend reached from outside cli/', () => {
    const r = check({
      'storage/index.ts': 'export const s = 1;\n',
      'storage/sqlite/index.ts': 'export const q = 1;\n',
      'storage/sqlite/store.ts': 'export const w = 1;\n',
      'server/a.ts': "import { w } from '../storage/sqlite/store.js';\nexport const a = w;\n",
      'server/b.ts': "import { q } from '../storage/sqlite/index.js';\nexport const b = q;\n",
      'cli/c.ts': "import { q } from '../storage/sqlite/index.js';\nexport const c = q;\n",
      'ui/d.ts': "import type { s } from '../storage/index.js';\nexport type D = typeof s;\n",
    });
    assert.equal(r.status, 1);
    assert.match(r.out, /server\/a\.ts: imports \.\.\/storage\/sqlite\/store\.js: storage\/ is imported only through an index\.ts/);
    assert.match(r.out, /server\/b\.ts: .*through its top index\.ts only/);
    assert.match(r.out, /ui\/d\.ts: .*ui\/ may not import storage\//, 'a type-only import counts');
    assert.doesNotMatch(r.out, /cli\/c\.ts/, 'cli/ picks backends');
    assert.match(r.out, /3 import\(s\) against/);
  });

  void it('lets a unit test compose modules through their index.ts', () => {
    const r = check({
      'server/index.ts': 'export const srv = 1;\n',
      'mirror/index.ts': 'export const m = 1;\n',
      'mirror/m.test.ts': "import { srv } from '../server/index.js';\nexport const t = srv;\n",
    });
    assert.equal(r.status, 0, r.out);
  });
});
