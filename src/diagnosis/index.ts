/**
 * The diagnosis module: the failure catalogue (each kind: the events that show
 * it, matched on upstream's message formats; the facts it extracts; its cause
 * sentence; its next steps) and incidents (a window's events grouped by root,
 * causes joined to the symptoms they explain).
 */
export { FAILURE_KIND_IDS, type Facts, type FailureKind, type FailureKindId, type FailureMatch, type Role, type StepTemplate, type StepWord, type Subject } from './kind.js';
export { CATALOGUE, classify, eventNode, explainEvent, FAILURE_EVENTS, failureKind } from './catalogue.js';
export { buildIncidents, CONTINUITY_GAP_MS, JOIN_SLACK_MS, MAX_EVIDENCE_ROWS, ONGOING_MS, WARM_UP_READINESS_FAILURES, type IncidentInput } from './incidents.js';
export { renderStep, stepHints } from './steps.js';
export { collectIncidents, type CollectIncidentsOptions } from './collect-incidents.js';
export { explainTimeline } from './explain-timeline.js';
