import type { SinkType } from '../types.js';
import { alertmanagerSinkType } from './alertmanager-sink.js';
import { fileSinkType, stdoutSinkType } from './jsonl-sink.js';
import { kafkaSinkType } from './kafka-sink.js';
import { natsSinkType } from './nats-sink.js';
import { lokiSinkType } from './loki-sink.js';
import { otlpSinkType } from './otlp-sink.js';
import { elasticsearchSinkType, opensearchSinkType } from './opensearch-sink.js';
import { slackSinkType } from './slack-sink.js';
import { webhookSinkType } from './webhook-sink.js';

/** SINK_TYPES maps each config `type` to its sink: the one table of sinks. */
export const SINK_TYPES: Record<string, SinkType> = {
  file: fileSinkType,
  stdout: stdoutSinkType,
  webhook: webhookSinkType,
  slack: slackSinkType,
  alertmanager: alertmanagerSinkType,
  kafka: kafkaSinkType,
  nats: natsSinkType,
  loki: lokiSinkType,
  opensearch: opensearchSinkType,
  elasticsearch: elasticsearchSinkType,
  otlp: otlpSinkType,
};

export { jsonLine } from './jsonl-sink.js';
export { kafkaMessage } from './kafka-sink.js';
export { natsMessage } from './nats-sink.js';
export { lokiPushBody, lokiStreams, rfc3339Nanos } from './loki-sink.js';
export { goTimeString, k8seventsLog, otlpLogsRequest, otlpRequests, KEVENTS_ATTRIBUTES, DEFAULT_MAX_IN_FLIGHT } from './otlp-sink.js';
export { bulkBody, bulkOutcome, indexName, indexTemplate } from './opensearch-sink.js';
export { cloudEvent, signBody, webhookBody, SIGNATURE_HEADER, CLOUDEVENT_TYPE } from './webhook-sink.js';
export { slackMessage, SLACK_LIMITS } from './slack-sink.js';
export { alertmanagerAlert, stableLabels, timelineURL, ALERT_LABELS, DEFAULT_ALERTNAME } from './alertmanager-sink.js';
