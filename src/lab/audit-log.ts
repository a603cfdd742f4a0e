import { existsSync, readFileSync } from 'node:fs';
import { stringify } from 'yaml';

/** LEARNER is the user of the learner's kubeconfig; the audit log records only its requests. */
export const LEARNER = 'lab-admin';

/** CHECKER is the user `kevents lab check` reads as: a read of its own must never pass for the learner's. */
export const CHECKER = 'lab-check';

/**
 * auditPolicyYaml records, at the Metadata level, the learner's requests on
 * events through either API, and nothing else: a refused create is seen nowhere
 * but here (with the API server's message), and so is a read of the other API.
 * The lab's own components (scheduler, kwok, the mirror) are other users.
 */
export function auditPolicyYaml(): string {
  return stringify({
    apiVersion: 'audit.k8s.io/v1',
    kind: 'Policy',
    omitStages: ['RequestReceived', 'ResponseStarted'],
    rules: [
      { level: 'Metadata', users: [LEARNER], resources: [{ group: '', resources: ['events'] }, { group: 'events.k8s.io', resources: ['events'] }] },
      { level: 'None' },
    ],
  });
}

/** AuditRecord is the part of an audit.k8s.io/v1 Event the checks read. */
export interface AuditRecord {
  verb: string;
  requestURI: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string };
  responseStatus?: { code?: number; message?: string; reason?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  userAgent?: string;
}

/** readAuditLog parses the lab's audit log, one JSON object a line (a line cut by a write in progress is skipped). */
export function readAuditLog(path: string): AuditRecord[] {
  if (!existsSync(path)) return [];
  const out: AuditRecord[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      out.push(JSON.parse(line) as AuditRecord);
    } catch {
      continue;
    }
  }
  return out;
}

/** apiOf names the API of a request on events: `core/v1` or `events.k8s.io/v1`. */
export function apiOf(r: AuditRecord): 'core/v1' | 'events.k8s.io/v1' {
  return r.objectRef?.apiGroup === 'events.k8s.io' ? 'events.k8s.io/v1' : 'core/v1';
}

/** isRead tells whether a request read events (get, list or watch) and was answered 200. */
export function isRead(r: AuditRecord): boolean {
  return (r.verb === 'get' || r.verb === 'list' || r.verb === 'watch') && (r.responseStatus?.code ?? 0) === 200;
}

/** covers tells whether a read covered an event: its name, or a list of its namespace or of all namespaces. */
export function covers(r: AuditRecord, event: { namespace: string; name: string }): boolean {
  const ref = r.objectRef ?? {};
  if (ref.namespace !== undefined && ref.namespace !== '' && ref.namespace !== event.namespace) return false;
  return ref.name === undefined || ref.name === '' || ref.name === event.name;
}
