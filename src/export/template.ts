import { FIELD_NAMES, fieldAt } from './fields.js';
import type { ExportFields } from './fields.js';
import { escapeMrkdwn } from './mrkdwn.js';

/**
 * A payload template is any YAML value. Strings in it may hold `{{ path }}`
 * references to the field set (`{{ regarding.name }}`, `{{ labels.app }}`): a
 * string that is exactly one reference takes the field's value with its type
 * (a number stays a number, an object an object), any other string has each
 * reference replaced by the field's text (nothing for a missing one).
 *
 * Field values are event text, written by anyone who may create an Event. A
 * reference may end in a filter that escapes it for where the payload goes:
 * `{{ message | mrkdwn }}` for Slack-style chat text, `{{ message | json }}` for
 * a JSON document built inside a string. A filtered reference is always text.
 */

const REFERENCE = /\{\{\s*([A-Za-z0-9_.-]+)\s*(?:\|\s*([A-Za-z0-9_-]*)\s*)?\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}$/;

/**
 * TEMPLATE_FILTERS are the escapes a reference may name after `|`: `mrkdwn`
 * escapes `&`, `<` and `>` (no mention, link or entity from the text), `json`
 * writes the value as JSON text (a string quoted, with `<`, `>`, `&`, U+2028 and
 * U+2029 as `\u` escapes, so it also sits safely inside HTML or a script).
 */
export const TEMPLATE_FILTERS: Readonly<Record<string, (v: unknown) => string>> = {
  mrkdwn: (v) => escapeMrkdwn(text(v)),
  json: (v) => (JSON.stringify(v ?? null) ?? 'null').replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
};

/** checkTemplateFilter tells what is wrong with a reference's filter, undefined when nothing is. */
export function checkTemplateFilter(filter: string): string | undefined {
  return Object.hasOwn(TEMPLATE_FILTERS, filter) ? undefined : `unknown filter ${JSON.stringify(filter)} (filters: ${Object.keys(TEMPLATE_FILTERS).join(', ')})`;
}

const OBJECT_FIELDS: Record<string, readonly string[] | 'any'> = {
  regarding: ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'fieldPath'],
  related: ['kind', 'namespace', 'name', 'uid', 'apiVersion'],
  labels: 'any',
  annotations: 'any',
};

/** checkFieldPath tells what is wrong with a reference to the field set, undefined when nothing is. */
export function checkFieldPath(path: string): string | undefined {
  const [head, ...rest] = path.split('.');
  if (head === undefined || !(FIELD_NAMES as readonly string[]).includes(head)) {
    return `unknown field ${JSON.stringify(path)} (fields: ${FIELD_NAMES.join(', ')})`;
  }
  if (rest.length === 0) return undefined;
  const sub = OBJECT_FIELDS[head];
  if (sub === undefined) return `field ${JSON.stringify(head)} has no subfields`;
  if (sub === 'any') return rest.length === 1 ? undefined : `${head}.KEY takes one key: ${JSON.stringify(path)}`;
  if (rest.length !== 1 || !sub.includes(rest[0]!)) return `unknown field ${JSON.stringify(path)} (${head} has ${sub.join(', ')})`;
  return undefined;
}

/** templateReferences lists every reference a template holds, with where (a path into the template) it sits and its filter. */
export function templateReferences(template: unknown, at = ''): { at: string; path: string; filter?: string }[] {
  if (typeof template === 'string') return [...template.matchAll(REFERENCE)].map((m) => ({ at, path: m[1]!, ...(m[2] === undefined ? {} : { filter: m[2] }) }));
  if (Array.isArray(template)) return template.flatMap((v, i) => templateReferences(v, `${at}[${i}]`));
  if (template !== null && typeof template === 'object') {
    return Object.entries(template).flatMap(([k, v]) => templateReferences(v, at === '' ? k : `${at}.${k}`));
  }
  return [];
}

/** renderTemplate fills a template with one change's fields. */
export function renderTemplate(template: unknown, fields: ExportFields): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole !== null) return fieldAt(fields, whole[1]!) ?? null;
    return template.replace(REFERENCE, (_, path: string, filter: string | undefined) => {
      const value = fieldAt(fields, path);
      const escape = filter === undefined ? undefined : TEMPLATE_FILTERS[filter];
      // An unknown filter is a config error (checkTemplateFilter); never send the value unescaped.
      if (filter !== undefined && escape === undefined) return '';
      return escape === undefined ? text(value) : escape(value);
    });
  }
  if (Array.isArray(template)) return template.map((v) => renderTemplate(v, fields));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, renderTemplate(v, fields)]));
  }
  return template;
}

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? '';
}
