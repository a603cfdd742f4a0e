import type { CoreEvent, Occurrence } from '../api/index.js';

/**
 * The export log: what `kevents export` reads of an archive. An archive's
 * occurrences are its outbox: each is appended in the same transaction as the
 * event write it describes, under an id that is the store-wide revision of
 * that write, so reading them in id order from a position sees every change
 * the archive committed, once, in commit order. Each sink keeps its position
 * (and the state of its alerting) in the archive too, and moves it only after
 * the sink acknowledged what it passed: delivery is at least once, and a
 * restart resumes exactly where the last acknowledged batch ended.
 */

/** ExportChange is one change of the log: the occurrence and the event version it produced. */
export interface ExportChange {
  /** id is the occurrence id: the revision of the event version, store-wide and increasing. */
  id: number;
  /** observedMicros is when the change was observed, epoch microseconds. */
  observedMicros: number;
  occurrence: Occurrence;
  /** event is the stored event after the change; absent for occurrences kept without their version (archives older than schema 3). */
  event?: CoreEvent;
}

/** SinkPosition is where one sink is in the log, with the state its policy keeps between batches. */
export interface SinkPosition {
  /** position is the id of the last change the sink is done with (0: none). */
  position: number;
  /** state is the policy's own state (JSON text), committed with the position. */
  state?: string;
  /** updatedAt is when the position last moved, Unix ms. */
  updatedAt?: number;
}

/** DeadLetter is a record a sink refused until its attempts ran out, kept in the archive instead of being delivered. */
export interface DeadLetter {
  sink: string;
  /** changeId is the id of the change the record came from. */
  changeId: number;
  /** record is the record as it would have been delivered (JSON text). */
  record: string;
  error: string;
  attempts: number;
  /** at is when it was dead-lettered, Unix ms. */
  at?: number;
}

/** ExportLog is an archive's log of changes as sinks read it, with each sink's position. */
export interface ExportLog {
  /** read returns up to `limit` changes with an id greater than `after`, in id order. */
  read(after: number, limit: number): Promise<ExportChange[]>;
  /** head is the id of the newest change (0 when there is none). */
  head(): Promise<number>;
  /** pending counts the changes after `after`, up to `cap` (a bounded scan: queue depth). */
  pending(after: number, cap: number): Promise<number>;
  getPosition(sink: string): Promise<SinkPosition | undefined>;
  /** commit moves a sink's position and state and appends its dead letters, in one transaction. */
  commit(sink: string, update: { position: number; state?: string | undefined; deadLetters?: DeadLetter[] }): Promise<void>;
  /** deadLetters lists a sink's dead letters, oldest first. */
  deadLetters(sink: string, limit: number): Promise<DeadLetter[]>;
  close(): Promise<void>;
}
