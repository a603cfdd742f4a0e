/**
 * wrk drives an HTTP load with Debian's `wrk` (a C load generator), so that on a
 * small machine the load itself takes little of the CPU the server under test
 * needs. Each request POSTs a new core/v1 Event with a unique name (one Lua state
 * per wrk thread, numbered so that threads never collide), and the result comes
 * back as JSON from the script's `done` hook: request rate, latency percentiles,
 * and every answer that was not a 2xx.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** WrkResult is one wrk run's outcome; latencies are in milliseconds. */
export interface WrkResult {
  rate: number;
  requests: number;
  p50: number;
  p99: number;
  max: number;
  /** errors counts non-2xx answers and socket errors (connect, read, write, timeout). */
  errors: number;
}

/** hasWrk tells whether `wrk` is on PATH. */
export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

// The body is a kubelet-like BackOff event about one of 5,000 pods; names are
// unique per request. `%s` parts are filled per request in request().
const SCRIPT = `
local counter = 0
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  namespace = args[1] or "bench"
  prefix = args[2] or "w"
  token = args[3]
end
function request()
  counter = counter + 1
  local pod = "pod-" .. (counter % 5000)
  local t = os.date("!%Y-%m-%dT%H:%M:%SZ")
  local body = '{"apiVersion":"v1","kind":"Event","metadata":{"name":"' .. pod .. "." .. prefix .. id .. "-" .. counter ..
    '","namespace":"' .. namespace .. '"},"involvedObject":{"kind":"Pod","namespace":"' .. namespace .. '","name":"' .. pod ..
    '","apiVersion":"v1"},"reason":"BackOff","message":"Back-off restarting failed container app in pod ' .. pod ..
    '","source":{"component":"kubelet","host":"node-1"},"firstTimestamp":"' .. t .. '","lastTimestamp":"' .. t ..
    '","count":1,"type":"Warning"}'
  local headers = { ["Content-Type"] = "application/json" }
  if token ~= nil and token ~= "" then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("POST", nil, headers, body)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status + e.connect + e.read + e.write + e.timeout))
end
`;

// GETs of one URL with the bearer token; the same result line.
const GET_SCRIPT = `
function init(args)
  token = args[1]
end
function request()
  local headers = { ["Accept"] = "application/json" }
  if token ~= nil and token ~= "" then headers["Authorization"] = "Bearer " .. token end
  return wrk.format("GET", nil, headers, nil)
end
${SCRIPT.slice(SCRIPT.indexOf('function done'))}`;

/** runWrkGet GETs `url` (e.g. a list page) from `connections` keep-alive connections for `seconds`. */
export function runWrkGet(url: string, options: { seconds: number; connections: number; threads?: number; token?: string }): Promise<WrkResult> {
  return wrkWith(GET_SCRIPT, url, options, [options.token ?? '']);
}

/**
 * runWrk POSTs new events to `url` (an events collection) from `connections`
 * keep-alive connections for `seconds`; `prefix` keeps names of separate runs apart.
 */
export function runWrk(url: string, options: { seconds: number; connections: number; threads?: number; namespace?: string; prefix?: string; token?: string }): Promise<WrkResult> {
  return wrkWith(SCRIPT, url, options, [options.namespace ?? 'bench', options.prefix ?? `w${Date.now().toString(36)}`, options.token ?? '']);
}

async function wrkWith(source: string, url: string, options: { seconds: number; connections: number; threads?: number }, scriptArgs: string[]): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'kevents-wrk-'));
  const script = join(dir, 'script.lua');
  writeFileSync(script, source);
  try {
    const args = [
      `-t${options.threads ?? 1}`,
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout', '10s',
      '-s', script,
      url,
      '--', ...scriptArgs,
    ];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
    });
    const m = /WRK_RESULT (\{.*\})/.exec(out);
    if (!m) throw new Error(`wrk printed no result: ${out}`);
    const r = JSON.parse(m[1]!) as { requests: number; duration_us: number; p50_us: number; p99_us: number; max_us: number; errors: number };
    return {
      rate: r.requests / (r.duration_us / 1e6),
      requests: r.requests,
      p50: r.p50_us / 1000,
      p99: r.p99_us / 1000,
      max: r.max_us / 1000,
      errors: r.errors,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
