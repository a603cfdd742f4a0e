/**
 * The diagnosis module: the failure catalogue (each kind: the events that show
 * it, matched on upstream's message formats; the facts it extracts; its cause
 * sentence; its next steps) and incidents (a window's events grouped by root,
 * causes joined to the symptoms they explain).
 */
export { FAILURE_KIND_IDS, type Facts, type FailureKind, type FailureKindId, type FailureMatch, type Role, type ShellWordRole, type StepTemplate, type StepWord, type Subject } from './kind.js';
export { CATALOGUE, classify, eventNode, failureKind } from './catalogue.js';
