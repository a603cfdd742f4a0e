/**
 * UTF-8 byte work for api/, which runs in the browser (the web UI) as well as in Node: Node's Buffer where the
 * runtime has it (native, and on every write's path), the platform's TextEncoder/TextDecoder otherwise.
 */

/** utf8Length is the UTF-8 byte length of `text` by a loop (a lone surrogate counts as the three bytes of U+FFFD). */
export function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * nativeByteLength is Node's Buffer.byteLength where the runtime has it: a megabyte-long text is measured in a
 * fraction of the time the loop of utf8Length takes. A browser has no Buffer and uses the loop.
 */
const nativeByteLength = (globalThis as { Buffer?: { byteLength(text: string): number } }).Buffer?.byteLength.bind((globalThis as { Buffer?: object }).Buffer);

/** utf8ByteLength is the UTF-8 byte length of `text`, as Buffer.byteLength counts it. */
export const utf8ByteLength: (text: string) => number = nativeByteLength ?? utf8Length;

/** utf8Encode is `text` as UTF-8 bytes. */
export function utf8Encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** utf8Decode reads UTF-8 bytes as text, a broken sequence (a cut character) as U+FFFD, as Buffer's toString does. */
export function utf8Decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** latin1Decode reads bytes as one character each (ISO-8859-1), as Buffer's toString('latin1') does. */
export function latin1Decode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  return out;
}
