import type { ExportRecord, ExportSink, SinkType } from '../types.js';
import { escapeMrkdwn } from '../mrkdwn.js';
import { DEFAULT_TIMEOUT_MS, postBody } from './http-post.js';

/** SlackOptions configure a Slack sink (an incoming webhook). */
export interface SlackOptions {
  url?: string;
  urlEnv?: string;
  timeoutMs: number;
}

/**
 * Slack's documented limits for a message posted to an incoming webhook
 * (Block Kit reference): a header's plain text ≤ 150 characters, a section's
 * text ≤ 3000, a section's fields ≤ 10 of ≤ 2000 each, a context ≤ 10
 * elements, a message ≤ 50 blocks. Every text built here is cut to fit.
 */
export const SLACK_LIMITS = { header: 150, sectionText: 3000, fieldText: 2000, fields: 10, contextElements: 10, blocks: 50 } as const;

/** slackText is event text for any Slack text object: escaped, then cut to `max` without splitting an entity. */
function slackText(raw: string, max: number): string {
  const text = escapeMrkdwn(raw);
  return text.length <= max ? text : `${text.slice(0, max - 1).replace(/&[a-z]{0,3}$/, '')}…`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * slackMessage is the Block Kit message of one record: a header, the cause (when
 * the record has one), the message, the facts as fields, and a context line.
 * Every text, the plain_text header and the top-level `text` of notifications
 * included, is escaped as Slack asks of any text object, so no field can
 * mention, link or format on its own.
 */
export function slackMessage(r: ExportRecord): { text: string; blocks: unknown[] } {
  const f = r.fields;
  const a = r.alert;
  const object = `${f.regarding.kind}${f.regarding.namespace !== '' ? ` ${f.regarding.namespace}/` : ' '}${f.regarding.name}`;
  const icon = f.type === 'Warning' ? ':warning:' : ':information_source:';
  const headline =
    a?.state === 'resolved'
      ? `${f.reason} stopped repeating: ${object}`
      : `${f.type === 'Warning' ? '⚠ ' : ''}${f.reason}: ${object}`;
  const times =
    a === undefined
      ? plural(f.count, 'time')
      : a.state === 'resolved'
        ? `${plural(a.repeats, 'time')} from ${a.since} to ${a.until}, then quiet`
        : `${plural(a.repeats, 'time')} since ${a.since}${a.events > 1 ? ` across ${plural(a.events, 'event')}` : ''}`;
  const fields = [
    ['Type', f.type],
    ['Reason', f.reason],
    ['Object', object],
    ['Count', times],
    ['Cluster', f.cluster],
    ['Reported by', f.reportingController],
  ]
    .filter(([, v]) => v !== undefined && v !== '')
    .slice(0, SLACK_LIMITS.fields)
    .map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${slackText(v!, SLACK_LIMITS.fieldText - k!.length - 3)}` }));
  const context = [`${icon} kevents`, `last seen ${f.lastSeen}`];
  if (a !== undefined && a.objects.length > 1) context.push(`objects: ${a.objects.join(', ')}`);
  const cause = f.cause !== undefined && f.cause !== '' ? f.cause : undefined;
  const blocks: unknown[] = [
    { type: 'header', block_id: slackText(r.id, 255), text: { type: 'plain_text', text: slackText(headline, SLACK_LIMITS.header), emoji: true } },
    // The cause leads, so the message says why before it says what; its text is the event's, escaped like any other.
    ...(cause === undefined ? [] : [{ type: 'section', text: { type: 'mrkdwn', text: `*Cause*\n${slackText(cause, SLACK_LIMITS.sectionText - 8)}` } }]),
    { type: 'section', text: { type: 'mrkdwn', text: slackText(f.message !== '' ? f.message : '(no message)', SLACK_LIMITS.sectionText) } },
    { type: 'section', fields },
    {
      type: 'context',
      elements: context.slice(0, SLACK_LIMITS.contextElements).map((t) => ({ type: 'mrkdwn', text: slackText(t, SLACK_LIMITS.sectionText) })),
    },
  ];
  // The top-level text is what notifications and clients without blocks show, read as mrkdwn: escaped like the rest.
  return { text: slackText(`${headline} (${times}): ${cause ?? f.message}`, SLACK_LIMITS.sectionText), blocks };
}

class SlackSink implements ExportSink {
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  async send(records: ExportRecord[], signal: AbortSignal): Promise<void> {
    // An incoming webhook takes one message per request.
    for (const r of records) {
      await postBody(this.url, JSON.stringify(slackMessage(r)), { headers: { 'Content-Type': 'application/json' }, signal, timeoutMs: this.timeoutMs });
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** slackSinkType posts one Block Kit message per alert to a Slack incoming webhook. */
export const slackSinkType: SinkType<SlackOptions> = {
  fields: ['url', 'urlEnv', 'timeout'],
  defaultPolicy: 'alert',
  read(r, path, raw) {
    const o: SlackOptions = { timeoutMs: r.duration([...path, 'timeout'], raw.timeout) ?? DEFAULT_TIMEOUT_MS };
    const url = r.string([...path, 'url'], raw.url, { pattern: /^https?:\/\/\S+$/, hint: 'must be an http:// or https:// URL' });
    const urlEnv = r.string([...path, 'urlEnv'], raw.urlEnv);
    if (raw.url === undefined && raw.urlEnv === undefined) r.fail([...path, 'url'], 'is required (or urlEnv)');
    if (url !== undefined && urlEnv !== undefined) r.fail([...path, 'urlEnv'], 'give url or urlEnv, not both');
    if (url !== undefined) o.url = url;
    if (urlEnv !== undefined) o.urlEnv = urlEnv;
    return o;
  },
  create(o, deps) {
    const url = o.urlEnv !== undefined ? deps.env[o.urlEnv] : o.url;
    if (url === undefined || url === '') throw new Error(`the environment variable ${o.urlEnv ?? ''} (urlEnv) is not set`);
    return new SlackSink(url, o.timeoutMs);
  },
};
