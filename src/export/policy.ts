import type { ExportFields } from './fields.js';
import { renderTemplate } from './template.js';
import type { ExportRecord, PolicyName } from './types.js';

/**
 * recordOf turns one change into the record of a record policy, or nothing:
 *
 * - `upsert`: one document per event (`documentId` = the event's uid), each
 *   change a new version of it; the exporter keeps only the last change of a
 *   document within a batch, so a sink sees the final count with fewer writes.
 * - `occurrences`: one record per observed change, with the count before and after.
 * - `first`: only the change that created the event.
 */
export function recordOf(policy: Exclude<PolicyName, 'alert'>, f: ExportFields, template: unknown, topic: string | undefined): ExportRecord | undefined {
  if (policy === 'first' && !f.isNew) return undefined;
  const doc = documentKey(f);
  const documentId = policy === 'occurrences' ? `${doc}.${f.changeId}` : doc;
  const r: ExportRecord = {
    id: policy === 'occurrences' ? documentId : `${doc}@${f.changeId}`,
    documentId,
    key: doc,
    version: f.changeId,
    policy,
    fields: f,
    payload: template === undefined ? f : renderTemplate(template, f),
  };
  if (topic !== undefined) r.topic = topic;
  return r;
}

/** documentKey is an event's identity across its repeats: its uid, else its namespace and name. */
export function documentKey(f: ExportFields): string {
  return f.uid !== '' ? f.uid : `${f.namespace}/${f.name}`;
}

/** collapseUpserts keeps the last record of each document, in the order of those last records. */
export function collapseUpserts(records: ExportRecord[]): ExportRecord[] {
  const last = new Map<string, number>();
  records.forEach((r, i) => {
    if (r.policy === 'upsert') last.set(`${r.topic ?? ''}\u0000${r.documentId}`, i);
  });
  return records.filter((r, i) => r.policy !== 'upsert' || last.get(`${r.topic ?? ''}\u0000${r.documentId}`) === i);
}
