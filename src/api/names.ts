import { latin1Decode, utf8ByteLength, utf8Decode, utf8Encode } from './utf8.js';
/**
 * Name and key syntax checks of apimachinery (`pkg/util/validation`,
 * `pkg/api/validate/content`, `pkg/api/validation`), returning upstream's
 * message strings exactly. Every length is a byte length, as Go's `len`.
 */

/** LengthUnit is the word a length error uses: older helpers say characters, newer ones bytes. */
export type LengthUnit = 'characters' | 'bytes';

/** DNS1123_SUBDOMAIN_MAX_LENGTH is the longest DNS-1123 subdomain (253 bytes). */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
/** DNS1123_LABEL_MAX_LENGTH is the longest DNS-1123 label (63 bytes). */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** QUALIFIED_NAME_MAX_LENGTH is the longest name part of a qualified name (63 bytes). */
export const QUALIFIED_NAME_MAX_LENGTH = 63;
/** LABEL_VALUE_MAX_LENGTH is the longest label value (63 bytes). */
export const LABEL_VALUE_MAX_LENGTH = 63;

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const labelKeyFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelKeyRe = new RegExp(`^${labelKeyFmt}$`);
const labelKeyErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValueFmt = `(${labelKeyFmt})?`;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** maxLenError is upstream's MaxLenError text. */
export function maxLenError(length: number, unit: LengthUnit = 'characters'): string {
  return `must be no more than ${length} ${unit}`;
}

/** regexError is upstream's RegexError text, examples included. */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}

/** EMPTY_ERROR is upstream's EmptyError text. */
export const EMPTY_ERROR = 'must be non-empty';

const byteLength = utf8ByteLength;

/**
 * isDNS1123Subdomain checks a lowercase RFC 1123 subdomain. `unit` picks the length
 * wording: `pkg/util/validation` (object names) says characters, `validate/content`
 * (the event namespace check, qualified-name prefixes) says bytes.
 */
export function isDNS1123Subdomain(value: string, unit: LengthUnit = 'characters'): string[] {
  return dns1123SubdomainErrors(value, byteLength(value), unit);
}

function dns1123SubdomainErrors(value: string, bytes: number, unit: LengthUnit): string[] {
  const errs: string[] = [];
  if (bytes > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH, unit));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

/** isDNS1123Label checks a lowercase RFC 1123 label (namespace names). */
export function isDNS1123Label(value: string): string[] {
  return dns1123LabelErrors(value, byteLength(value));
}

function dns1123LabelErrors(value: string, bytes: number): string[] {
  const errs: string[] = [];
  if (bytes > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    // A valid subdomain that is not a valid label, with the length already checked, can only have dots.
    if (dns1123SubdomainRe.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

/**
 * isQualifiedName checks a qualified name (label key syntax): an optional DNS-subdomain
 * prefix and `/`, then a name of at most 63 bytes. Messages are those of the
 * `validation.IsQualifiedName` of Kubernetes 1.33 (newer releases say "a valid label key").
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else for (const m of isDNS1123Subdomain(prefix, 'bytes')) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH, 'bytes')}`);
  if (!labelKeyRe.test(name)) errs.push(`name part ${regexError(labelKeyErrMsg, labelKeyFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** isValidLabelValue checks a label value: empty, or a name part of at most 63 bytes. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH, 'bytes'));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

/**
 * validatePathSegmentName is the generic apiserver name rule: a name that can sit in a
 * URL path. With `prefix` (a generateName) only the substring rules apply. Empty and
 * long names pass, as upstream.
 */
export function validatePathSegmentName(name: string, prefix: boolean): string[] {
  if (!prefix) {
    for (const illegal of ['.', '..']) if (name === illegal) return [`may not be '${illegal}'`];
  }
  const errs: string[] = [];
  for (const illegal of ['/', '%']) if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  return errs;
}

/**
 * maskTrailingDash stands in for upstream's helper of the same name, on the UTF-8
 * bytes of a generateName: a trailing `-` is allowed in a prefix, so the last two
 * bytes (upstream drops two, not one) become `a`. The result is a latin1 string with
 * one char per byte, so non-ASCII bytes still fail the ASCII-only patterns.
 */
function maskTrailingDash(name: string): string {
  const bytes = utf8Encode(name);
  if (bytes.length > 1 && name.endsWith('-')) return `${latin1Decode(bytes.subarray(0, bytes.length - 2))}a`;
  return latin1Decode(bytes);
}

/** NameValidator is apimachinery's ValidateNameFunc: messages for a name, or for a generateName when `prefix`. */
export type NameValidator = (name: string, prefix: boolean) => string[];

/** nameIsDNSSubdomain is apimachinery's NameIsDNSSubdomain, the name rule of strict-mode events. */
export const nameIsDNSSubdomain: NameValidator = (name, prefix) => {
  if (!prefix) return isDNS1123Subdomain(name);
  const masked = maskTrailingDash(name);
  return dns1123SubdomainErrors(masked, masked.length, 'characters');
};

/** nameIsDNSLabel is apimachinery's NameIsDNSLabel, the rule for namespace names. */
export const nameIsDNSLabel: NameValidator = (name, prefix) => {
  if (!prefix) return isDNS1123Label(name);
  const masked = maskTrailingDash(name);
  return dns1123LabelErrors(masked, masked.length);
};

/** GENERATED_NAME_ALPHABET is the alphabet of generated name suffixes (no vowels, no 0/1/3). */
export const GENERATED_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
/** MAX_GENERATED_NAME_BASE_LENGTH is how many bytes of a generateName are kept (63 - 5). */
export const MAX_GENERATED_NAME_BASE_LENGTH = 58;
const GENERATED_SUFFIX_LENGTH = 5;

/**
 * generateName is the apiserver's SimpleNameGenerator: the base cut to 58 bytes, then
 * 5 random characters. `random` returns a number in [0, 1), like Math.random.
 */
export function generateName(base: string, random: () => number = Math.random): string {
  const bytes = utf8Encode(base);
  const kept = bytes.length > MAX_GENERATED_NAME_BASE_LENGTH ? utf8Decode(bytes.subarray(0, MAX_GENERATED_NAME_BASE_LENGTH)) : base;
  let suffix = '';
  for (let i = 0; i < GENERATED_SUFFIX_LENGTH; i++) {
    const idx = Math.min(Math.floor(random() * GENERATED_NAME_ALPHABET.length), GENERATED_NAME_ALPHABET.length - 1);
    suffix += GENERATED_NAME_ALPHABET[Math.max(idx, 0)]!;
  }
  return kept + suffix;
}
