import type { IncidentHint } from '../api/index.js';
import { shellArg, shellQuote } from '../api/index.js';
import type { StepTemplate } from './kind.js';

/**
 * Next steps as commands a reader may paste: every value from the events is
 * checked for its role and quoted by the one shell rule (api's shellArg); a
 * value that fails its check leaves its placeholder (`<pod>`) in the command
 * and the reason in `why`, so a command never carries a stranger's text.
 */

/** renderStep writes one step's command. */
export function renderStep(t: StepTemplate): IncidentHint {
  const words: string[] = [];
  const problems: string[] = [];
  for (const w of t.words) {
    if (typeof w === 'string') {
      // Our own words are quoted too where they hold shell syntax (a jsonpath's braces and quotes).
      words.push(shellQuote(w));
      continue;
    }
    const checked = shellArg(w.value, w.role);
    if (!checked.ok) {
      // The literal prefix stays (`--target=<container>`): the reader sees which flag wants the value.
      words.push(w.prefix === undefined ? checked.arg : `${shellQuote(w.prefix)}${checked.arg}`);
      problems.push(checked.why);
    } else if (w.prefix === undefined) {
      words.push(checked.arg);
    } else {
      // The value passed its check: the prefix and it are one word, quoted together.
      words.push(shellQuote(`${w.prefix}${w.value ?? ''}`));
    }
  }
  return { command: words.join(' '), why: problems.length === 0 ? t.why : `${t.why} (${problems.join('; ')})` };
}

/** stepHints renders steps in order, each command once. */
export function stepHints(templates: readonly StepTemplate[]): IncidentHint[] {
  const out: IncidentHint[] = [];
  const seen = new Set<string>();
  for (const t of templates) {
    const h = renderStep(t);
    if (seen.has(h.command)) continue;
    seen.add(h.command);
    out.push(h);
  }
  return out;
}
