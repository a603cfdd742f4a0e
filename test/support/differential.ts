import { request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import YAML from 'yaml';
import { goYamlTags } from '../../src/server/http/http-io.js';

/**
 * Target is one API server the differential suite talks to: the real kube-apiserver or
 * `kevents serve`. Both get the same requests; only how they are reached differs.
 */
export interface Target {
  name: string;
  url: string;
  /** ca is the serving certificate's CA, for https targets. */
  ca?: Buffer;
  /** token is sent as a bearer token when set. */
  token?: string;
}

/** Answer is what a target answered to one step, before normalisation. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
  /** frames are the decoded lines of a watch. */
  frames?: any[];
}

/** Step is one request of a case. Strings may hold `{ns}`, `{ns2}` and `{rv:N}`, `{continue:N}`, `{itemRv:N}` references to earlier steps' answers. */
export interface Step {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** watch: the path is a watch; its frames are read until the server ends it (use timeoutSeconds) or `frames` arrived. */
  watch?: { frames?: number; during?: Step[] };
  /** compare: false runs the step (set-up) without comparing its answer. */
  compare?: boolean;
  /** select compares only this part of the JSON answer (for documents where a real cluster serves more than events). */
  select?: (json: any) => unknown;
  /** yaml compares a YAML answer as the data it holds, not its layout (docs/compatibility.md). */
  yaml?: boolean;
}

/** Case is one request sequence of the differential suite. */
export interface Case {
  id: string;
  title: string;
  steps: Step[];
}

function substitute(text: string, ns: string, answers: Answer[]): string {
  return text
    .replaceAll('{ns}', ns)
    .replaceAll('{ns2}', `${ns}-b`)
    .replace(/\{(rv|continue|itemRv|name):(\d+)\}/g, (_, kind: string, i: string) => {
      const a = answers[Number(i)];
      if (a === undefined) throw new Error(`step ${i} has not run`);
      const j = a.json;
      const v = kind === 'rv' ? j?.metadata?.resourceVersion
        : kind === 'continue' ? j?.metadata?.continue
          : kind === 'name' ? j?.metadata?.name
            : j?.items?.[0]?.metadata?.resourceVersion;
      return encodeURIComponent(String(v ?? ''));
    });
}

function substituteBody(body: unknown, ns: string, answers: Answer[]): unknown {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return substitute(body, ns, answers);
  return JSON.parse(substitute(JSON.stringify(body), ns, answers));
}

/** send sends one request to a target and reads the whole answer (a watch until it ends or `frames` arrived). */
export function send(target: Target, method: string, path: string, body: unknown, headers: Record<string, string>, watchFrames?: number, onOpen?: () => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, target.url);
    const h: Record<string, string> = { Accept: 'application/json', ...headers };
    if (target.token !== undefined) h.Authorization = `Bearer ${target.token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['Content-Type'] ??= 'application/json';
      h['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const fn = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = fn(url, { method, headers: h, ...(target.ca ? { ca: target.ca } : {}), timeout: 30_000 }, (res) => {
      let text = '';
      let done = false;
      res.setEncoding('utf8');
      const finish = (): void => {
        if (done) return;
        done = true;
        let json: any;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        const answer: Answer = { status: res.statusCode ?? 0, headers: res.headers, text, json };
        if (watchFrames !== undefined) answer.frames = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
        resolve(answer);
      };
      onOpen?.();
      res.on('data', (d: string) => {
        text += d;
        if (watchFrames !== undefined && watchFrames > 0 && text.split('\n').slice(0, -1).filter((l) => l.trim() !== '').length >= watchFrames) {
          text = `${text.split('\n').slice(0, -1).join('\n')}\n`;
          finish();
          req.destroy();
        }
      });
      res.on('end', finish);
      res.on('close', finish);
    });
    req.on('timeout', () => req.destroy(new Error(`${target.name}: ${method} ${path} timed out`)));
    req.on('error', (err) => reject(err));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** runCase runs every step of a case against a target in namespace ns and returns the answers in order (watch `during` steps follow their watch). */
export async function runCase(target: Target, c: Case, ns: string): Promise<{ step: Step; answer: Answer }[]> {
  const out: { step: Step; answer: Answer }[] = [];
  const answers: Answer[] = [];
  const exec = async (step: Step): Promise<void> => {
    const path = substitute(step.path, ns, answers);
    const body = substituteBody(step.body, ns, answers);
    if (step.watch) {
      let opened!: () => void;
      const open = new Promise<void>((r) => (opened = r));
      const pending = send(target, step.method, path, body, step.headers ?? {}, step.watch.frames ?? 0, opened);
      const slot = out.length;
      out.push({ step, answer: undefined as unknown as Answer });
      answers.push(undefined as unknown as Answer);
      await open;
      // A watch is registered once its headers are sent; give the server a moment to start its stream.
      await new Promise((r) => setTimeout(r, 150));
      for (const inner of step.watch.during ?? []) await exec(inner);
      const answer = await pending;
      out[slot] = { step, answer };
      answers[slot] = answer;
      return;
    }
    const answer = await send(target, step.method, path, body, step.headers ?? {});
    out.push({ step, answer });
    answers.push(answer);
  };
  for (const step of c.steps) await exec(step);
  return out;
}

const AGE = /^(\d+(ms|s|m|h|d|y))+$|^<unknown>$|^<invalid>$/;

/** normalise removes from an answer only what must differ between two servers: ids, resourceVersion values, server times, ages, generated names. */
export function normalise(value: any, ns: string): any {
  const walk = (v: any, key: string | undefined): any => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, any> = {};
      for (const k of Object.keys(v).sort()) {
        const x = v[k];
        if (k === 'managedFields' || k === 'selfLink') continue;
        if (k === 'uid' && key === 'metadata') out[k] = x === undefined ? x : '<uid>';
        else if (k === 'uid' && key === 'details' && typeof x === 'string' && /^[0-9a-f-]{36}$/.test(x)) out[k] = '<uid>';
        else if (k === 'uid' && (key === 'details' || key === 'involvedObject' || key === 'regarding')) out[k] = x;
        else if (k === 'resourceVersion' && typeof x === 'string' && x !== '') out[k] = '<rv>';
        else if (k === 'creationTimestamp' || k === 'deletionTimestamp') out[k] = x === null ? null : '<time>';
        else if (k === 'continue' && typeof x === 'string' && x !== '') out[k] = '<continue>';
        else if (k === 'name' && key === 'metadata' && typeof x === 'string' && v.generateName && x.startsWith(v.generateName)) out[k] = `${v.generateName}<generated>`;
        else if (k === 'cells' && Array.isArray(x)) out[k] = x.map((c: any) => (typeof c === 'string' && AGE.test(c) ? '<age>' : walk(c, k)));
        else out[k] = walk(x, k);
      }
      return out;
    }
    if (typeof v === 'string') return normaliseText(v, ns);
    return v;
  };
  return walk(value, undefined);
}

/** normaliseText hides resourceVersion numbers and generated suffixes that messages quote. */
export function normaliseText(s: string, ns: string): string {
  return s
    .replaceAll(ns, '<ns>')
    .replace(/too old resource version: \d+ \(\d+\)/g, 'too old resource version: <rv> (<rv>)')
    .replace(/Too large resource version: (\d+), current: \d+/g, 'Too large resource version: $1, current: <rv>')
    .replace(/ResourceVersion in record \(\d+\)/g, 'ResourceVersion in record (<rv>)')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>')
    .replace(/the object has been modified; please apply your changes to the latest version and try again/g, '$&')
    .replace(/resourceVersion: Invalid value: "\d+"/g, 'resourceVersion: Invalid value: "<rv>"');
}

/** Comparable is the part of an answer the suite compares. */
export interface Comparable {
  status: number;
  contentType: string | undefined;
  warning: string | undefined;
  body: any;
}

/** comparable reduces an answer to what is compared. */
export function comparable(a: Answer, ns: string, select?: (json: any) => unknown, yaml = false): Comparable {
  const ct = a.headers['content-type'];
  const warning = a.headers.warning;
  let body: any;
  if (a.frames !== undefined) body = a.frames.map((f) => normalise(f, ns));
  // Read as Go's clients read it: YAML 1.1 (where `yes` is a boolean and a time a timestamp).
  else if (yaml && a.status < 300) body = normalise(YAML.parse(a.text, { version: '1.1', customTags: goYamlTags }), ns);
  else if (select !== undefined && a.json !== undefined) body = normalise(select(a.json), ns);
  else if (a.json !== undefined) body = normalise(a.json, ns);
  else body = normaliseText(a.text.trim(), ns);
  return {
    status: a.status,
    contentType: ct?.replace(/;\s*charset=utf-8$/i, ''),
    warning: Array.isArray(warning) ? warning.join(', ') : warning,
    body,
  };
}

/** diffValues lists the paths at which two JSON values differ, with both values. */
export function diffValues(a: any, b: any, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => diffValues(a[k], b[k], `${path}/${k}`));
  }
  return [`${path || '/'}: ${JSON.stringify(a)?.slice(0, 400)} != ${JSON.stringify(b)?.slice(0, 400)}`];
}
