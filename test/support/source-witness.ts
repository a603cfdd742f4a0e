import { request as httpRequest } from 'node:http';
import type { ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import type { CoreEvent } from '../../src/api/index.js';
import type { ControlPlane } from './control-plane.js';

/** WitnessSource is what the witness needs of a source: a real control plane, or a plain-http `kevents serve` (no CA, no token). */
export type WitnessSource = Pick<ControlPlane, 'url'> & Partial<Pick<ControlPlane, 'caFile' | 'adminToken'>>;

/** SourceWitness is a test's own watch of a real API server's core/v1 events: every version it served, in order. */
export interface SourceWitness {
  /** versions are the ADDED and MODIFIED objects, in resourceVersion order. */
  readonly versions: CoreEvent[];
  /** deleted are the uids the source deleted (--event-ttl). */
  readonly deleted: Set<string>;
  /** resourceVersion is that of the last frame seen. */
  readonly resourceVersion: string;
  /** seen tells whether a version of an event (uid and resourceVersion) was served. */
  seen(uid: string, resourceVersion: string): boolean;
  stop(): void;
}

/**
 * startWitness watches every namespace's core/v1 events from `resourceVersion` with the admin
 * token (if the source has one), reopening from the last frame when the server ends the watch. It is the ground truth of
 * the mirror tests, written without kevents' own client, and fails loudly rather than miss a change.
 */
export function startWitness(cp: WitnessSource, resourceVersion: string): SourceWitness {
  const ca = cp.caFile === undefined ? undefined : readFileSync(cp.caFile);
  const headers: Record<string, string> = { Accept: 'application/json', ...(cp.adminToken === undefined ? {} : { Authorization: `Bearer ${cp.adminToken}` }) };
  const versions: CoreEvent[] = [];
  const deleted = new Set<string>();
  const keys = new Set<string>();
  let rv = resourceVersion;
  let stopped = false;
  let current: ClientRequest | undefined;
  let failure: Error | undefined;
  const open = (): void => {
    const url = new URL(`/api/v1/events?watch=true&resourceVersion=${rv}`, cp.url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    current = send(url, { ...(ca === undefined ? {} : { ca }), headers }, (res) => {
      if (res.statusCode !== 200) {
        // A refused watch (a Status) is a failure of the source, not an end to reopen from.
        failure = new Error(`the witness watch was refused: ${res.statusCode}`);
        res.resume();
        return;
      }
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line === '') continue;
          const frame = JSON.parse(line) as { type: string; object: CoreEvent };
          if (frame.type === 'ERROR') {
            failure = new Error(`the witness watch failed: ${line}`);
            continue;
          }
          const o = frame.object;
          rv = o.metadata.resourceVersion ?? rv;
          if (frame.type === 'DELETED') deleted.add(o.metadata.uid ?? '');
          else if (frame.type === 'ADDED' || frame.type === 'MODIFIED') {
            versions.push(o);
            keys.add(`${o.metadata.uid}@${o.metadata.resourceVersion}`);
          }
        }
      });
      res.on('end', () => {
        if (!stopped && failure === undefined) open();
      });
    });
    current.on('error', (e) => {
      if (!stopped) failure = e;
    });
    current.end();
  };
  open();
  const check = (): void => {
    if (failure !== undefined) throw failure;
  };
  return {
    get versions() {
      check();
      return versions;
    },
    deleted,
    get resourceVersion() {
      check();
      return rv;
    },
    seen(uid, version) {
      check();
      return keys.has(`${uid}@${version}`);
    },
    stop() {
      stopped = true;
      current?.destroy();
    },
  };
}
