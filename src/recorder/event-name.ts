import { randomUUID } from 'node:crypto';

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** isDnsSubdomain tells whether a name is a DNS-1123 subdomain (what a strict server requires of a name). */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && dnsSubdomain.test(name);
}

/**
 * EventNamer generates `<object name>.<hex nanoseconds>` names, as client-go's
 * `GenerateEventName`, falling back to a UUID when that is not a valid name. A
 * millisecond clock would give two events of one object in the same millisecond
 * the same name, so the nanosecond value only ever increases within a namer.
 */
export class EventNamer {
  private last = 0n;
  // Whether the last object name seen makes valid event names: one object tends to emit in runs.
  private lastRefName: string | undefined;
  private lastRefValid = false;

  /** nanos returns a strictly increasing nanosecond timestamp not before `ms`. */
  nanos(ms: number): bigint {
    let n = BigInt(Math.floor(ms)) * 1_000_000n;
    if (n <= this.last) n = this.last + 1n;
    this.last = n;
    return n;
  }

  /** name is the name for an event about `refName` at `ms`; `uuidFallback` false keeps a bad name (the aggregator's way). */
  name(refName: string, ms: number, uuidFallback = true): string {
    const name = `${refName}.${this.nanos(ms).toString(16)}`;
    if (!uuidFallback) return name;
    if (refName !== this.lastRefName) {
      // `<valid subdomain>.<hex>` is valid whenever the whole still fits in 253 characters.
      this.lastRefName = refName;
      this.lastRefValid = refName !== '' && isDnsSubdomain(refName);
    }
    if (this.lastRefValid && name.length <= 253) return name;
    return isDnsSubdomain(name) ? name : randomUUID();
  }
}
