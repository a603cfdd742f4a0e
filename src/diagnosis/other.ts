import type { FailureKind } from './kind.js';
import { objectWords, present, said, theObject } from './text.js';

/** WARNING_TYPE is the type of the events `other` reads, compared ignoring case (core/v1 does not validate it). */
export const WARNING_TYPE = 'Warning';

/**
 * OTHER_KIND is any Warning the catalogue does not know: its sentence repeats
 * what the event says, its reason and message, and claims no cause beyond them.
 */
export const OTHER_KIND: FailureKind = {
  id: 'other',
  role: 'cause',
  subject: 'object',
  reasons: [],
  match: (e) => ((e.type ?? '').toLowerCase() === WARNING_TYPE.toLowerCase() ? {} : undefined),
  cause: (f) => `${theObject(f)} reported ${present(f.reason) ? said(f.reason) : 'a Warning'}${present(f.message) ? `: ${said(f.message)}` : ''}.`,
  steps: (f) => [{ words: ['kubectl', 'describe', ...objectWords(f)], why: 'the object as it is now, and its events' }],
};
