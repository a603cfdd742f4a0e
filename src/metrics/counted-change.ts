import type { ExportChange } from '../storage/index.js';

/**
 * CountedChange is what the event metrics read of a change: its occurrence and the event version
 * it produced. A change of the archive's log has this shape, and so has what a mirror tells of
 * the occurrences it appended.
 */
export type CountedChange = Pick<ExportChange, 'occurrence' | 'event'>;
