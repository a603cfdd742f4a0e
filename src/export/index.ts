/**
 * The export module: delivers an archive's changes to other systems (docs/export.md).
 * A sink declares what it needs (`ExportSink`); the exporter reads the archive's
 * log (`ExportLog` from the storage contract) and runs one loop per sink.
 */
export { createExporter, DEFAULT_POLL_INTERVAL_MS, type Exporter, type ExporterOptions } from './exporter.js';
export { loadExportConfig, parseExportConfig, DEFAULT_BATCH_SIZE, DEFAULT_RETRY, DEFAULT_STUCK_AFTER_MS } from './config.js';
export type { ExportConfig, SinkConfig, RetryOptions } from './config.js';
export { ConfigError, ConfigReader, isConfigError, type ConfigIssue } from './config-reader.js';
export { fieldsOf, FIELD_NAMES, type ExportFields } from './fields.js';
export { renderTemplate, checkFieldPath } from './template.js';
export { escapeMrkdwn } from './mrkdwn.js';
export { readRule, routeTargets, type Route, type Rule } from './route.js';
export { recordOf, collapseUpserts, documentKey } from './policy.js';
export { createAlertPolicy, DEFAULT_ALERT, type AlertPolicy } from './alerting.js';
export { SinkRejected, SinkUnavailable, isSinkRejected, retryAfterOf } from './types.js';
export type { AlertOptions, AlertSummary, EventExplainer, ExportRecord, ExportSink, PolicyName, SinkDeps, SinkType } from './types.js';
export { SINK_TYPES, jsonLine, kafkaMessage, natsMessage, cloudEvent, signBody, webhookBody, slackMessage, SIGNATURE_HEADER, SLACK_LIMITS } from './sinks/index.js';
export { lokiPushBody, lokiStreams, rfc3339Nanos } from './sinks/index.js';
export { bulkBody, bulkOutcome, indexName, indexTemplate } from './sinks/index.js';
export { goTimeString, k8seventsLog, otlpLogsRequest, otlpRequests, KEVENTS_ATTRIBUTES, DEFAULT_MAX_IN_FLIGHT } from './sinks/index.js';
export { alertmanagerAlert, stableLabels, timelineURL, ALERT_LABELS, DEFAULT_ALERTNAME } from './sinks/index.js';
