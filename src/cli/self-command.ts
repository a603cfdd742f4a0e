import { existsSync, realpathSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, relative, sep } from 'node:path';

/** SelfCommandContext is what selfCommand looks at (injected for tests). */
export interface SelfCommandContext {
  env: NodeJS.ProcessEnv;
  /** script is the path of the running bin (process.argv[1]). */
  script: string | undefined;
  /** cwd is where the user stands; npm scripts run in the package root, and $INIT_CWD says where npm was called. */
  cwd: string;
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * selfCommand is how to run this kevents again from where the user stands, so
 * that the commands kevents prints (the serve banner, an error's fix) run as
 * printed: `kevents` when that name on the PATH is this program, `npx kevents`
 * inside a project that has it installed, else `node <path of the bin>`.
 */
export function selfCommand(ctx: SelfCommandContext = { env: process.env, script: process.argv[1], cwd: process.env.INIT_CWD ?? process.cwd() }): string {
  const script = ctx.script === undefined ? undefined : real(ctx.script);
  // Run from another program (a test calling runCli), there is no bin to name.
  if (script === undefined || !/^kevents(\.js)?$/.test(basename(script))) return 'kevents';
  for (const dir of (ctx.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'kevents');
    if (existsSync(candidate) && real(candidate) === script) return 'kevents';
  }
  // An installed package: <project>/node_modules/kevents/dist/bin/kevents.js, where npx finds it.
  const marker = `${sep}node_modules${sep}kevents${sep}`;
  const at = script.lastIndexOf(marker);
  if (at >= 0 && within(script.slice(0, at), real(ctx.cwd) ?? ctx.cwd)) return 'npx kevents';
  const cwd = real(ctx.cwd) ?? ctx.cwd;
  const shown = within(cwd, script) ? relative(cwd, script) : script;
  return `node ${shellWord(shown === '' ? script : shown)}`;
}

