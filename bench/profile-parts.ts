/**
 * bench/profile-parts.ts reads a V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` file) of
 * `kevents serve` and sums its self time by part of a create's path (the parts below, each a set of
 * functions matched by name and file), divided by the operations the profile covered, beside the
 * functions with the most self time. Idle time is left out of every figure, so a part reads as CPU per operation.
 * Run: node --import tsx bench/profile-parts.ts FILE.cpuprofile [--per 40000] [--top 40]
 * (profile a server under load with `BENCH_KEVENTS_NODE_ARGS="--cpu-prof --cpu-prof-dir DIR"
 * BENCH_PHASES=start,warmed BENCH_ROUNDS=1 npx tsx bench/creates.ts`: 2 × BENCH_CREATES creates).
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** ProfileNode is one call-tree node of a `.cpuprofile`. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

/** Profile is the JSON of a `.cpuprofile`. */
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * PARTS are a create's parts, first match wins; a function is matched by its name and the
 * file it is in (`name@file`). Anything else is "the rest".
 */
const PARTS: [string, RegExp][] = [
  ['garbage collection', /^\(garbage collector\)@/],
  ['the stored object compressed (encodeObject)', /@.*storage\/shared\/object-codec/],
  ['the search index catch-up (words, entries)', /@.*(?:storage\/search|search-words|search-index)/],
  ['SQLite (statements, BEGIN and COMMIT, the store\'s own JS)', /@.*(?:better-sqlite3|storage\/sqlite\/)/],
  ['the stored JSON (encodeEvent, withRevision)', /@.*storage\/shared\//],
  ['decoding and checking the request (decode, validation)', /@.*\/api\/(?:decode|validat|object-meta|names|time|quantity|duration)/],
  ['the answer encoded (encodeFor, conversion, sendObject)', /^sendObject@|@.*(?:server\/views|api\/conversion)/],
  ['Table rows rendered (tableRow, render cache)', /@.*(?:api\/table|rendered-versions|render-written|render-warm)/],
  ['routing, checks, gate, handler, metrics (server/, auth/)', /@.*(?:\/server\/|\/auth\/|find-my-way)/],
  ['socket writes (writev: TLS encryption and the syscall)', /^(?:writev|writeBuffer|writeUtf8String|writeLatin1String|writeGeneric|writevGeneric)@/],
  ['node:http (parser, headers, request and response objects)', /@node:(?:_http|http|internal\/http)|^(?:parserOnHeadersComplete|parserOnBody|parserOnMessageComplete|execute)@/],
  ['streams, events, timers (node internals)', /@node:(?:internal\/streams|events|stream|internal\/timers|internal\/process|net|internal\/async_hooks|_tls|tls|internal\/tls)/],
  // With --writer-thread: the writes' messages to the writer thread (cloned, and the thread woken), apart from the rest.
  ['messages between the threads (postMessage)', /^postMessage@/],
];

const maps = new Map<string, SourceMap | undefined>();

/**
 * sourceOf is the source file (under src/, or a package's path) a bundled function comes from, read from the
 * bundle's source map (the CLI is one bundle, so its own file names say nothing), or the url as it is.
 */
function sourceOf(url: string, line: number, column: number): string {
  if (!url.startsWith('file://')) return url;
  let map = maps.get(url);
  if (!maps.has(url)) {
    const path = `${fileURLToPath(url)}.map`;
    map = existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : undefined;
    maps.set(url, map);
  }
  // findEntry answers an empty object where the map has no mapping.
  const found = map?.findEntry(line, column);
  const entry = found !== undefined && 'originalSource' in found ? found : undefined;
  const source = entry?.originalSource ?? url;
  return `${source.replace(/^.*?\/(?=src\/|node_modules\/)/, '').replace(/^node_modules\//, '')}:${(entry?.originalLine ?? line) + 1}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  if (file === undefined) throw new Error('usage: profile-parts.ts FILE.cpuprofile [--per N] [--top N]');
  const opt = (name: string, fallback: number): number => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const per = opt('per', 1);
  const top = opt('top', 40);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // Each sample's time is the delta that follows it (the profiler's own convention).
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName}@${f.url === '' ? '' : sourceOf(f.url, f.lineNumber, f.columnNumber)}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const idle = [...byFunction].filter(([k]) => k.startsWith('(idle)@')).reduce((s, [, us]) => s + us, 0);
  const busy = [...byFunction].reduce((s, [, us]) => s + us, 0) - idle;
  const parts = new Map<string, number>(PARTS.map(([name]) => [name, 0]));
  let rest = 0;
  for (const [key, us] of byFunction) {
    if (key.startsWith('(idle)@')) continue;
    const part = PARTS.find(([, re]) => re.test(key.replace(/:\d+$/, '')));
    if (part === undefined) rest += us;
    else parts.set(part[0], parts.get(part[0])! + us);
  }
  // Inclusive time: each sample counts once for every distinct function of kevents (src/) on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = new Map<number, string>();
  for (const n of profile.nodes) keyOf.set(n.id, `${n.callFrame.functionName}@${n.callFrame.url === '' ? '' : sourceOf(n.callFrame.url, n.callFrame.lineNumber, n.callFrame.columnNumber)}`);
  const inclusive = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const seen = new Set<string>();
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const key = keyOf.get(id)!;
      if (key.includes('@src/') && !seen.has(key)) seen.add(key);
    }
    for (const key of seen) inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const fmt = (us: number): string => `${(us / per).toFixed(1).padStart(7)} µs ${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  console.log(`${file}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s, per ${per} operations`);
  for (const [name, us] of parts) console.log(`${fmt(us)}  ${name}`);
  console.log(`${fmt(rest)}  the rest`);
  console.log(`${fmt(busy)}  everything but idle`);
  console.log(`\nfunctions by self time:`);
  for (const [key, us] of [...byFunction].filter(([k]) => !k.startsWith('(idle)@')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(us)}  ${key}`);
  console.log(`\nkevents' functions by inclusive time (what they call counted in):`);
  for (const [key, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(us)}  ${key}`);
}

main();
