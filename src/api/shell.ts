import { utf8ByteLength } from './utf8.js';
import { hasControlCharacter, escapeTerminalLine } from './escape.js';
import { isDNS1123Label, isDNS1123Subdomain } from './names.js';

/**
 * Command building from event text. Event fields are written by anyone who can
 * create an Event, so a value goes into a command a reader may paste only when it
 * is a valid name for its role, POSIX-quoted where it needs it; otherwise the
 * command shows a placeholder and says why.
 */

/** SAFE_WORD is what a POSIX shell reads as one literal word with no quoting (no globbing, expansion or tilde). */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * shellQuote makes `s` one literal word for a POSIX shell: as is when every
 * character is inert (`[A-Za-z0-9_@%+=:,./-]`), else in single quotes, each `'`
 * written `'\''`. The empty string is `''`. Quoting keeps control characters and
 * newlines as they are: values from events go through shellArg, which refuses them.
 */
export function shellQuote(s: string): string {
  if (SAFE_WORD.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * ShellRole is what a value stands for in a command, which picks its rule: `pod`,
 * `node` and `name` (most object names) are DNS-1123 subdomains; `namespace` and
 * `container` are DNS-1123 labels, as the API server validates them; `kind` is a
 * Kind (`ReplicaSet`); `port` a port number or an IANA service name; `text` any
 * single line without control characters that does not start with `-` (a
 * field-selector value, an image, a URL).
 */
export type ShellRole = 'pod' | 'node' | 'namespace' | 'container' | 'name' | 'kind' | 'port' | 'text';

/** ShellArg is shellArg's answer: the argument to write, or a placeholder and why the value could not be used. */
export type ShellArg = { ok: true; arg: string } | { ok: false; arg: string; why: string };

/** SHELL_TEXT_MAX_BYTES bounds a `text` value: a command is for pasting, not a carrier for a megabyte of message. */
export const SHELL_TEXT_MAX_BYTES = 1024;
/** SHELL_WHY_VALUE_CHARS is how much of a refused value its `why` repeats, escaped. */
const SHELL_WHY_VALUE_CHARS = 64;

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const IANA_SVC_NAME = /^(?=.*[a-z])(?!.*--)[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/;

const RULES: Readonly<Record<ShellRole, { noun: string; check: (v: string) => string | undefined }>> = {
  pod: { noun: 'pod name', check: (v) => subdomain(v) },
  node: { noun: 'node name', check: (v) => subdomain(v) },
  name: { noun: 'name', check: (v) => subdomain(v) },
  namespace: { noun: 'namespace', check: (v) => label(v) },
  container: { noun: 'container name', check: (v) => label(v) },
  kind: { noun: 'kind', check: (v) => (KIND.test(v) ? undefined : 'is not a Kind (a capital letter, then letters and digits)') },
  port: { noun: 'port', check: (v) => (isPort(v) ? undefined : 'is neither a port number (1-65535) nor a service port name') },
  text: {
    noun: 'value',
    check: (v) => {
      if (utf8ByteLength(v) > SHELL_TEXT_MAX_BYTES) return `is longer than ${SHELL_TEXT_MAX_BYTES} bytes`;
      // Quoting cannot stop a program reading a word that starts with '-' as an option.
      return v.startsWith('-') ? "starts with '-', which a program would read as an option" : undefined;
    },
  },
};

function subdomain(v: string): string | undefined {
  return isDNS1123Subdomain(v).length === 0 ? undefined : "is not a DNS-1123 subdomain (at most 253 of a-z, 0-9, '-' and '.')";
}

function label(v: string): string | undefined {
  return isDNS1123Label(v).length === 0 ? undefined : "is not a DNS-1123 label (at most 63 of a-z, 0-9 and '-')";
}

function isPort(v: string): boolean {
  if (/^[1-9][0-9]{0,4}$/.test(v)) return Number(v) <= 65535;
  return IANA_SVC_NAME.test(v);
}

/** shellPlaceholder is the placeholder a command shows for a role whose value is missing or refused: `<pod>`. */
export function shellPlaceholder(role: ShellRole): string {
  return `<${role}>`;
}

/**
 * shellArg checks an event's value for its role and returns it POSIX-quoted, or
 * the role's placeholder (`<pod>`) with a one-line `why` that repeats the value
 * escaped and cut short. Nothing with a control character, newline, bidi or
 * zero-width character is ever returned as an argument, whatever the role.
 */
export function shellArg(value: string | undefined, role: ShellRole): ShellArg {
  const rule = RULES[role];
  if (value === undefined || value === '') return { ok: false, arg: shellPlaceholder(role), why: `the events do not name the ${rule.noun}` };
  const problem = hasControlCharacter(value) ? 'holds control, newline or invisible characters' : rule.check(value);
  if (problem !== undefined) return { ok: false, arg: shellPlaceholder(role), why: `the ${rule.noun} ${displayValue(value)} ${problem}` };
  return { ok: true, arg: shellQuote(value) };
}

/** displayValue shows a refused value in a `why`: on one line, escaped, quoted and at most 64 characters long. */
function displayValue(value: string): string {
  const chars = [...value];
  const cut = chars.length > SHELL_WHY_VALUE_CHARS ? `${chars.slice(0, SHELL_WHY_VALUE_CHARS).join('')}…` : value;
  return `"${escapeTerminalLine(cut)}"`;
}

/** ShellCommand is a command built by shellCommand, with the reasons for each placeholder it shows. */
export interface ShellCommand {
  command: string;
  /** refused says, once per reason, why a placeholder stands where an event's value would have gone. */
  refused: string[];
}

/**
 * shellCommand is a tagged template for a command a reader may paste: its literal
 * text is the caller's own and taken as is; every interpolated value must be a
 * ShellArg, so event text can only enter through shellArg, or a ShellCommand built
 * the same way (an optional flag, say). Refused values show as their placeholder,
 * and their reasons are gathered in `refused`.
 */
export function shellCommand(literals: TemplateStringsArray, ...parts: (ShellArg | ShellCommand)[]): ShellCommand {
  let command = literals[0] ?? '';
  const refused: string[] = [];
  const refuse = (why: string): void => {
    if (!refused.includes(why)) refused.push(why);
  };
  parts.forEach((p, i) => {
    if ('refused' in p) {
      command += p.command;
      p.refused.forEach(refuse);
    } else {
      command += p.arg;
      if (!p.ok) refuse(p.why);
    }
    command += literals[i + 1] ?? '';
  });
  return { command, refused };
}
