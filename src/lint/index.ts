// Conventions events should keep (reason case, types, messages, a reporting controller), checked over a list of
// events: `kevents lint`. The report is printed by src/print.
export { lintEvents, LINT_CHECKS, LONG_MESSAGE_CHARS, type LintCheck, type LintFinding, type LintReport } from './lint-events.js';
