import type { CoreEvent } from '../api/index.js';
import { eventCount } from '../api/index.js';

/**
 * Conventions events should keep so that people and tools can read them:
 * kubectl filters types, alerting keys on reasons, and a message is read at 3 am.
 */

/** LONG_MESSAGE_CHARS: past this a message wraps twice on an 80-column terminal and is cut in most UIs. */
export const LONG_MESSAGE_CHARS = 240;

/** LintCheck is one convention. */
export interface LintCheck {
  id: string;
  /** description says what breaks it, and why it matters. */
  description: string;
  /** breaks tells whether an event breaks the convention. */
  breaks(e: CoreEvent): boolean;
}

const UPPER_CAMEL = /^[A-Z][A-Za-z0-9]*$/;

function reporter(e: CoreEvent): string {
  return e.reportingComponent || e.source?.component || '';
}

/** carriesNameOrNumber tells whether a message names something: a digit, a quote, the object's name, or a token like `ns/name`, `a.b`, `a-b`, `a_b`, `a:b`. */
function carriesNameOrNumber(e: CoreEvent): boolean {
  const m = e.message ?? '';
  if (/[0-9"'`]/.test(m)) return true;
  const name = e.involvedObject.name ?? '';
  if (name !== '' && m.includes(name)) return true;
  const container = /\{([^}]+)\}/.exec(e.involvedObject.fieldPath ?? '')?.[1];
  if (container !== undefined && m.includes(container)) return true;
  return /\w[/.:_-]\w/.test(m);
}

/** LINT_CHECKS are the conventions `kevents lint` checks, in report order. */
export const LINT_CHECKS: readonly LintCheck[] = [
  {
    id: 'reason-not-UpperCamelCase',
    description: 'reason is not UpperCamelCase (like BackOff): tools and alerts match reasons exactly',
    breaks: (e) => !UPPER_CAMEL.test(e.reason ?? ''),
  },
  {
    id: 'type-not-Normal-or-Warning',
    description: 'type is neither Normal nor Warning: kubectl events --types cannot select it',
    breaks: (e) => e.type !== 'Normal' && e.type !== 'Warning',
  },
  {
    id: 'message-long',
    description: `message is longer than ${LONG_MESSAGE_CHARS} characters: it is cut in tables and hard to read`,
    breaks: (e) => [...(e.message ?? '')].length > LONG_MESSAGE_CHARS,
  },
  {
    id: 'message-without-number-or-name',
    description: 'message names nothing and counts nothing: it cannot say which or how much',
    breaks: (e) => !carriesNameOrNumber(e),
  },
  {
    id: 'no-reporting-controller',
    description: 'neither reportingController nor source.component is set: nobody can tell who reported it',
    breaks: (e) => reporter(e) === '',
  },
];

/** LintFinding counts the events of one reporter and reason that break one check. */
export interface LintFinding {
  check: string;
  reporter: string;
  reason: string;
  /** events is how many event objects; occurrences adds up their counts. */
  events: number;
  occurrences: number;
  /** example is one offending event, `namespace/name`. */
  example: string;
}

/** LintReport is the result of lintEvents. */
export interface LintReport {
  /** checked is how many events were read; broken how many break at least one check. */
  checked: number;
  broken: number;
  /** byCheck totals each check, in LINT_CHECKS order (checks nobody breaks included). */
  byCheck: { check: string; description: string; events: number; occurrences: number }[];
  /** findings break the totals down by reporter and reason, most events first. */
  findings: LintFinding[];
}

/** lintEvents checks every event against every convention. */
export function lintEvents(events: readonly CoreEvent[], checks: readonly LintCheck[] = LINT_CHECKS): LintReport {
  const byCheck = checks.map((c) => ({ check: c.id, description: c.description, events: 0, occurrences: 0 }));
  const findings = new Map<string, LintFinding>();
  let broken = 0;
  for (const e of events) {
    let any = false;
    const count = eventCount(e);
    checks.forEach((c, i) => {
      if (!c.breaks(e)) return;
      any = true;
      byCheck[i]!.events++;
      byCheck[i]!.occurrences += count;
      const key = `${c.id}\u0000${reporter(e)}\u0000${e.reason ?? ''}`;
      const f = findings.get(key);
      if (f === undefined) {
        findings.set(key, { check: c.id, reporter: reporter(e), reason: e.reason ?? '', events: 1, occurrences: count, example: `${e.metadata.namespace ?? ''}/${e.metadata.name ?? ''}` });
      } else {
        f.events++;
        f.occurrences += count;
      }
    });
    if (any) broken++;
  }
  const order = new Map(checks.map((c, i) => [c.id, i]));
  const sorted = [...findings.values()].sort((a, b) => order.get(a.check)! - order.get(b.check)! || b.events - a.events || (a.reporter < b.reporter ? -1 : a.reporter > b.reporter ? 1 : 0) || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  return { checked: events.length, broken, byCheck, findings: sorted };
}
