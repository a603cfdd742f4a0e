import type { Status, StatusReason } from '../api/index.js';
import { failureStatus, StatusError } from '../api/index.js';

/**
 * RequestConstructionError is a request that can never succeed as asked (an
 * empty or mismatched namespace). Recorders do not retry it.
 */
export class RequestConstructionError extends Error {
  override name = 'RequestConstructionError';
}

const reasonByCode: Record<number, [StatusReason, string]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', 'the server does not allow access to the requested resource'],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', 'the server was unable to respond with a content type that the client supports'],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Gone', 'the server has asked for the client to try again later'],
  413: ['RequestEntityTooLarge', 'the server has rejected the request because the entity is too large'],
  415: ['UnsupportedMediaType', 'the server was unable to respond with a content type that the client supports'],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  500: ['InternalError', 'an error on the server has prevented the request from succeeding'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

function parseRetryAfter(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const n = Number.parseInt(header, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status' && typeof (v as { code?: unknown }).code === 'number';
}

/**
 * statusErrorFromResponse turns a non-2xx answer into a StatusError: the
 * server's own Status when it sent one, else one made from the HTTP code (as
 * client-go does for a proxy's bare 502). A `Retry-After` header fills
 * `details.retryAfterSeconds` when the Status lacks it.
 */
export function statusErrorFromResponse(code: number, body: string, headers: { 'retry-after'?: string | string[] }, verb: string): StatusError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  let status: Status;
  if (isStatus(parsed)) {
    status = parsed;
  } else {
    const [reason, text] = reasonByCode[code] ?? (code >= 500 ? (['InternalError', `an error on the server has prevented the request from succeeding`] as const) : (['BadRequest', 'unknown'] as const));
    const trimmed = body.trim();
    const message = trimmed !== '' && code >= 500 ? `${text} (${verb}): ${trimmed.slice(0, 200)}` : `${text} (${verb})`;
    status = failureStatus(code, reason, message, {});
  }
  const header = headers['retry-after'];
  const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header);
  if (retryAfter !== undefined && !(status.details?.retryAfterSeconds !== undefined && status.details.retryAfterSeconds > 0)) {
    status = { ...status, details: { ...status.details, retryAfterSeconds: retryAfter } };
  }
  return new StatusError(status);
}
