import { readFileSync } from 'node:fs';

/** version is the kevents package version. */
export const version: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
