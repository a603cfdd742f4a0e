/**
 * The print module: every text a command prints from what the other modules compute, in one place. kubectl's
 * tabwriter and Table printer, the `kubectl get events` / `kubectl events` / describe listings, Go's JSON and YAML,
 * the timeline, incidents and lint reports. It only formats: what a server answers (the Table columns of
 * core/v1 events) stays in api/, which the web UI shares; which printer a flag picks is each command's printer.ts.
 */
export * from './tabwriter.js';
export * from './kubectl-events.js';
export * from './describe-events.js';
export { formatNameLines } from './name-printer.js';
export { compareBytes, goJsonIndent, sortKeysDeep } from './go-json.js';
export { goYaml } from './go-yaml.js';
export { formatTimeline, TIMELINE_FORMATS, type FormatTimelineOptions, type TimelineFormat, type TimelineStyle } from './format-timeline.js';
export { formatIncidents, INCIDENT_FORMATS, type FormatIncidentsOptions, type IncidentFormat } from './format-incidents.js';
export { formatLintReport } from './lint-report.js';
