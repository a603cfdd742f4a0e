import type { Logger } from '../internal/index.js';
import { LruCache } from '../internal/index.js';
import { ACTION_MAX_BYTES, NOTE_MAX_BYTES, REASON_MAX_BYTES, WARNED_KEYS_MAX } from './constants.js';

/** isValidEventType accepts only Normal and Warning, as client-go's ValidateEventType. */
export function isValidEventType(type: unknown): type is 'Normal' | 'Warning' {
  return type === 'Normal' || type === 'Warning';
}

const upperCamel = /^[A-Z][A-Za-z0-9]*$/;

/** FieldProblem is one problem found in a recorded event's fields. */
export interface FieldProblem {
  field: 'reason' | 'action' | 'note' | 'message';
  problem: string;
}

/**
 * checkEventFields finds what a server would reject or what breaks automation:
 * reason (and action, for events.k8s.io) should be UpperCamelCase of at most
 * 128 bytes, the note at most 1024 bytes. Problems are reported, never fixed.
 */
export function checkEventFields(input: { reason: string; action?: string; note?: string; noteField: 'note' | 'message' }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  checkName(problems, 'reason', input.reason, REASON_MAX_BYTES);
  if (input.action !== undefined) checkName(problems, 'action', input.action, ACTION_MAX_BYTES);
  // A note of at most a quarter of the limit in UTF-16 units cannot exceed it in UTF-8 bytes.
  if (input.note !== undefined && input.note.length > NOTE_MAX_BYTES / 4) {
    const bytes = Buffer.byteLength(input.note, 'utf8');
    if (bytes > NOTE_MAX_BYTES) problems.push({ field: input.noteField, problem: `is ${bytes} bytes, the limit is ${NOTE_MAX_BYTES}` });
  }
  return problems;
}

function checkName(problems: FieldProblem[], field: 'reason' | 'action', value: string | undefined, max: number): void {
  if (value === undefined || value === '') {
    problems.push({ field, problem: 'is empty' });
    return;
  }
  if (!upperCamel.test(value)) problems.push({ field, problem: 'is not UpperCamelCase' });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > max) problems.push({ field, problem: `is ${bytes} bytes, the limit is ${max}` });
}

/**
 * FieldWarner logs field problems as warnings, once per call site shape (reason
 * and problem), so a bad reason in a hot loop costs one log line.
 */
export class FieldWarner {
  private readonly warned = new LruCache<string, true>({ maxEntries: WARNED_KEYS_MAX });
  // The last reason/action found clean: call sites repeat theirs, and re-checking them is most of the cost.
  private cleanReason: string | undefined;
  private cleanAction: string | undefined;
  constructor(private readonly logger: Logger) {}

  check(input: { reason: string; action?: string; note?: string; noteField: 'note' | 'message' }): void {
    const shortNote = input.note === undefined || input.note.length <= NOTE_MAX_BYTES / 4;
    if (shortNote && input.reason === this.cleanReason && input.action === this.cleanAction) return;
    const problems = checkEventFields(input);
    if (problems.length === 0) {
      this.cleanReason = input.reason;
      this.cleanAction = input.action;
      return;
    }
    for (const p of problems) {
      const key = `${p.field}\u0000${p.problem}\u0000${input.reason}\u0000${input.action ?? ''}`;
      if (this.warned.has(key)) continue;
      this.warned.set(key, true);
      this.logger.warn(`Event ${p.field} ${p.problem}`, { reason: input.reason, action: input.action });
    }
  }
}
