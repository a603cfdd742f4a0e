/**
 * collect gathers every use of a repeatable flag, in order (commander's argParser for `--cluster`, `--retention`, ...).
 * The flag is given no default, so help prints no "(default: [])": an absent flag reads as undefined.
 */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
