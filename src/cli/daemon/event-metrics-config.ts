import { ConfigError, ConfigReader, fieldsOf, isConfigError, readRule } from '../../export/index.js';
import type { Rule } from '../../export/index.js';
import { EVENT_LABEL_NAMES } from '../../metrics/index.js';
import type { EventLabel, EventMetricsOptions } from '../../metrics/index.js';
import { CliError } from '../errors.js';

/**
 * parseEventMetricsConfig reads an event metrics config (docs/metrics.md): `labels`, `match` and
 * `drop` rules in the routes' rule language, `maxSeries`, `idleAfter` and `compatibility`. Every
 * mistake is reported with its line and column.
 */
export function parseEventMetricsConfig(text: string, file = 'config'): EventMetricsOptions {
  const r = new ConfigReader(text);
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  const o = r.object([], r.root ?? {}, ['labels', 'match', 'drop', 'maxSeries', 'idleAfter', 'compatibility']) ?? {};
  const options: EventMetricsOptions = {};
  if (o.labels !== undefined) {
    const labels: EventLabel[] = [];
    r.list(['labels'], o.labels).forEach((v, i) => {
      const l = r.string(['labels', i], v, { required: true, oneOf: EVENT_LABEL_NAMES });
      if (l === undefined) return;
      if (labels.includes(l as EventLabel)) r.fail(['labels', i], `${l} is listed twice`);
      else labels.push(l as EventLabel);
    });
    options.labels = labels;
  }
  const rules = (key: 'match' | 'drop'): Rule[] =>
    r.list([key], o[key]).flatMap((v, i) => {
      const rule = readRule(r, [key, i], v);
      return rule === undefined ? [] : [rule];
    });
  const match = rules('match');
  const drop = rules('drop');
  // As in a route: a change a drop rule matches is not counted; with match rules, only what one matches is.
  if (match.length > 0 || drop.length > 0) {
    options.filter = (c) => {
      // A mirror's change has no place in the log yet; the rules read none of those fields.
      const f = fieldsOf({ id: 0, observedMicros: 0, ...c });
      return !drop.some((rule) => rule.test(f)) && (match.length === 0 || match.some((rule) => rule.test(f)));
    };
  }
  const maxSeries = r.integer(['maxSeries'], o.maxSeries, { min: 1, max: 10_000_000 });
  if (maxSeries !== undefined) options.maxSeries = maxSeries;
  const idle = r.duration(['idleAfter'], o.idleAfter);
  if (idle !== undefined) options.idleAfterMs = idle;
  if (o.compatibility !== undefined) {
    r.list(['compatibility'], o.compatibility).forEach((v, i) => {
      if (r.string(['compatibility', i], v, { required: true, oneOf: ['caicloud'] }) === 'caicloud') options.caicloud = true;
    });
  }
  if (r.issues.length > 0) throw new ConfigError(file, r.issues);
  return options;
}


/** readEventMetricsConfig is parseEventMetricsConfig with its issues as the command's one error. */
export function readEventMetricsConfig(text: string, file: string): EventMetricsOptions {
  try {
    return parseEventMetricsConfig(text, file);
  } catch (e) {
    if (isConfigError(e)) throw new CliError(`invalid event metrics config:\n${e.message}`, { cause: e });
    throw e;
  }
}
