/** collect gathers every use of a repeatable flag, in order (commander's argParser for `--cluster`, `--retention`, ...). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
