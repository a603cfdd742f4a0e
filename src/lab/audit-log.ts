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

/** CoveredEvent is what `covers` needs to know of an event. */
export interface CoveredEvent {
  namespace: string;
  name: string;
  involvedObject?: { kind?: string | undefined; name?: string | undefined } | undefined;
  type?: string | undefined;
  reason?: string | undefined;
}

function fieldValue(e: CoveredEvent, key: string): string | undefined {
  switch (key) {
    case 'metadata.name':
      return e.name;
    case 'metadata.namespace':
      return e.namespace;
    case 'involvedObject.name':
    case 'regarding.name':
      return e.involvedObject?.name ?? '';
    case 'involvedObject.kind':
    case 'regarding.kind':
      return e.involvedObject?.kind ?? '';
    case 'type':
      return e.type ?? '';
    case 'reason':
      return e.reason ?? '';
    default:
      return undefined;
  }
}

/**
 * covers tells whether a read returned an event: a get of its name, or a list
 * of its namespace (or all) whose field selector it matches (terms on fields
 * the lab does not know are taken to match).
 */
export function covers(r: AuditRecord, event: CoveredEvent): boolean {
  const ref = r.objectRef ?? {};
  if (ref.namespace !== undefined && ref.namespace !== '' && ref.namespace !== event.namespace) return false;
  if (ref.name !== undefined && ref.name !== '') return ref.name === event.name;
  const selector = new URL(r.requestURI, 'http://audit').searchParams.get('fieldSelector') ?? '';
  for (const term of selector.split(',')) {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(term.trim());
    if (m === null) continue;
    const value = fieldValue(event, m[1]!);
    if (value === undefined) continue;
    if ((m[2] === '!=') === (value === m[3])) return false;
  }
  return true;
}
