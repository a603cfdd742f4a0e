import { escapeTerminal } from '../api/index.js';
import type { CheckResult, Exercise, ExerciseContext } from './exercise.js';
import { aggregation } from './exercises/aggregation.js';
import { critical } from './exercises/critical.js';
import { incident } from './exercises/incident.js';
import { kubelet } from './exercises/kubelet.js';
import { kubeletReal } from './exercises/kubelet-real.js';
import { noTarget } from './exercises/no-target.js';
import { scheduler } from './exercises/scheduler.js';
import { twoApis } from './exercises/two-apis.js';

/** EXERCISES are the course's exercises, in order, in a lab without a real node (the kubelet's reasons simulated). */
export const EXERCISES: readonly Exercise[] = [twoApis, noTarget, critical, aggregation, scheduler, kubelet, incident];

/** EXERCISES_REAL_NODE are the course's exercises in a lab with a real node (`lab up --kubelet`): exercise 6 reads its kubelet. */
export const EXERCISES_REAL_NODE: readonly Exercise[] = EXERCISES.map((e) => (e === kubelet ? kubeletReal : e));

/** exercisesOf are the exercises of a lab, with or without its real node. */
export function exercisesOf(realNode: boolean): readonly Exercise[] {
  return realNode ? EXERCISES_REAL_NODE : EXERCISES;
}

/** findExercise reads N of `lab exercise N`, or undefined when there is no such exercise. */
export function findExercise(text: string, exercises: readonly Exercise[] = EXERCISES): Exercise | undefined {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  return exercises.find((e) => e.number === n);
}

/** formatExerciseList is `kevents lab exercises`. */
export function formatExerciseList(exercises: readonly Exercise[] = EXERCISES): string {
  return [...exercises.map((e) => `  ${e.number}  ${e.title.padEnd(40)} ${e.summary}`), '', 'kevents lab exercise N prints one; kevents lab check N says what is done and what is missing.', ''].join('\n');
}

/** formatExercise is `kevents lab exercise N`. */
export function formatExercise(e: Exercise, ctx: ExerciseContext, checkCommand: string): string {
  return [`Exercise ${e.number}: ${e.title}`, '', e.task(ctx), '', `When done: ${checkCommand}`, ''].join('\n');
}

/** passed tells whether every step of a check is done. */
export function passed(r: CheckResult): boolean {
  return r.items.every((i) => i.ok);
}

/** formatCheck is the answer of `kevents lab check N`. */
export function formatCheck(e: Exercise, r: CheckResult): string {
  const missing = r.items.filter((i) => !i.ok).length;
  // Step texts name events and pods of the lab's cluster, written by whoever can create them.
  return escapeTerminal([
    `Exercise ${e.number}: ${e.title}`,
    ...r.items.map((i) => `  ${i.ok ? 'done   ' : 'missing'}  ${i.text}`),
    ...(r.notes.length > 0 ? ['', ...r.notes] : []),
    '',
    missing === 0 ? `Exercise ${e.number} is done.` : `Exercise ${e.number} is not done yet: ${missing} of ${r.items.length} steps missing.`,
    '',
  ].join('\n'));
}
