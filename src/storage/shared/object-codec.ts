/**
 * The encoding of stored objects: JSON text compressed with LZ77 against a
 * preset dictionary of typical event JSON, as a BLOB in SQLite (its schema 3)
 * and as `bytea` in PostgreSQL (its schema 6: objects and occurrence bodies).
 *
 * An event is ~800 bytes of JSON of which most is field names and values every
 * event shares (`"involvedObject":{"kind":"Pod"`, `kubelet`, timestamps repeated
 * three times); the dictionary lets even a single object refer to them, which a
 * compressor that sees one row at a time otherwise cannot. node:zlib with a
 * dictionary compresses a little better (entropy coding), but each call costs
 * ~27 µs to deflate and ~12 µs to inflate in stream set-up alone, several times
 * the cost of the SQLite insert it saves; this byte-oriented coder costs a few
 * µs each way, less than JSON.parse of the text.
 *
 * Format (version 1): byte 0 is 1, then the text's UTF-8 length (varint), then
 * tokens until the end: a byte `00LLLLLL` is followed by L+1 literal bytes; a
 * byte `01LLLLLL` (L < 63) by L+1 bytes each holding two lowercase hex digits
 * (generated name suffixes, half their size); the byte 0x7f by the 16 bytes of
 * a lowercase UUID (8-4-4-4-12 hex digits, as Kubernetes writes uids); a byte `1LLLLLLL` copies L+4
 * bytes from `distance` (varint) bytes back in the dictionary followed by the
 * output. The dictionary is part of the format: a different one needs a new
 * version byte.
 */

/** DICTIONARY_V1 is typical event JSON, as `encodeEvent` writes it; the most common strings sit at the end (shortest distances). */
const DICTIONARY_V1 = [
  '{"kind":"Event","apiVersion":"v1","metadata":{"name":"","namespace":"kube-system","uid":"","resourceVersion":"","creationTimestamp":"2025-01-01T00:00:00Z",',
  '"labels":{"archive.kevents.io/cluster":""},"annotations":{"archive.kevents.io/source-name":""}},"involvedObject":{"kind":"Node","name":"","uid":""},',
  '"reason":"NodeReady","message":"Node  status is now: NodeReady","source":{"component":"node-controller"},',
  '"firstTimestamp":"2025-01-01T00:00:00Z","lastTimestamp":"2025-01-01T00:00:00Z","count":1,"type":"Normal","eventTime":null,',
  '"series":{"count":2,"lastObservedTime":"2025-01-01T00:00:00.000000Z"},"action":"Binding","reportingComponent":"default-scheduler","reportingInstance":""}',
  '{"kind":"Event","apiVersion":"v1","metadata":{"name":"","namespace":"default","uid":"","creationTimestamp":"2025-01-01T00:00:00Z"},',
  '"involvedObject":{"kind":"ReplicaSet","namespace":"default","name":"","uid":"","apiVersion":"apps/v1","resourceVersion":""},',
  '"reason":"SuccessfulCreate","message":"Created pod: ","source":{"component":"replicaset-controller"},"count":1,"type":"Normal",',
  '"reportingComponent":"replicaset-controller","reportingInstance":""}',
  '{"kind":"Event","apiVersion":"v1","metadata":{"name":"","namespace":"default","uid":"","creationTimestamp":"2025-01-01T00:00:00Z"},',
  '"involvedObject":{"kind":"Pod","namespace":"default","name":"","uid":"","apiVersion":"v1","resourceVersion":""},',
  '"reason":"FailedScheduling","message":"0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint. preemption: ",',
  '"source":{"component":"default-scheduler"},"eventTime":"2025-01-01T00:00:00.000000Z","type":"Warning","action":"Scheduling",',
  '"reportingComponent":"default-scheduler","reportingInstance":"default-scheduler-"}',
  '{"reason":"Scheduled","message":"Successfully assigned default/ to ","reason":"Pulling","message":"Pulling image \\"\\"",',
  '"reason":"Pulled","message":"Successfully pulled image \\"\\" in ms (ms including waiting). Image size:  bytes.",',
  '"reason":"Created","message":"Created container: ","reason":"Started","message":"Started container ",',
  '"reason":"Killing","message":"Stopping container ","reason":"Unhealthy","message":"Readiness probe failed: ",',
  '"reason":"BackOff","message":"Back-off restarting failed container  in pod ","type":"Warning"}',
  '{"kind":"Event","apiVersion":"v1","metadata":{"name":"","namespace":"default","uid":"","creationTimestamp":"2025-01-01T00:00:00Z",',
  '"annotations":{"archive.kevents.io/source-resource-version":""}},"involvedObject":{"kind":"Pod","namespace":"default","name":"","uid":"","apiVersion":"v1",',
  '"resourceVersion":"","fieldPath":"spec.containers{}"},"reason":"Pulled","message":"Container image \\"\\" already present on machine",',
  '"source":{"component":"kubelet","host":""},"firstTimestamp":"2025-01-01T00:00:00Z","lastTimestamp":"2025-01-01T00:00:00Z","count":1,',
  '"type":"Normal","eventTime":null,"reportingComponent":"kubelet","reportingInstance":""}',
].join('');

const VERSION = 1;
const MIN_MATCH = 4;
const MAX_TOKEN_MATCH = MIN_MATCH + 0x7f;
const MAX_LITERALS = 0x40;
/** MIN_HEX_RUN is the shortest run of hex digits packed two to a byte (shorter ones cost more in token bytes than they save). */
const MIN_HEX_RUN = 8;
const HEX_TOKEN = 0x40;
const MAX_HEX_BYTES = 0x3f;
const UUID_TOKEN = 0x7f;
const UUID_LENGTH = 36;
/** UUID_DASHES are the positions of the dashes in a UUID's text. */
const UUID_DASHES = [8, 13, 18, 23];
/** HEX_VALUE maps a byte to its hex digit's value, -1 when it is not a lowercase hex digit. */
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;
const HEX_CHAR = Buffer.from('0123456789abcdef', 'latin1');
/** NATIVE_COPY is the length from which the decoder copies with a native call rather than byte by byte. */
const NATIVE_COPY = 16;
/** DICTIONARY_CHAIN is how many earlier dictionary positions of a hash a match search tries. */
const DICTIONARY_CHAIN = 16;
/** MAX_DISTANCE bounds how far back a match may reach (three varint bytes). */
const MAX_DISTANCE = (1 << 21) - 1;
const HASH_BITS = 13;
const HASH_SHIFT = 32 - HASH_BITS;

const dictionary = Buffer.from(DICTIONARY_V1, 'utf8');
const D = dictionary.length;
if (D > 0x7fff) throw new Error('object codec: the dictionary outgrows its 16-bit tables');

/**
 * dictionaryTable maps the hash of each 4-byte sequence of the dictionary to its last position (-1: none). Positions in
 * the dictionary fit 16 bits, and the encoder's tables are read at random: among a server's other work, the smaller
 * they are the more of them stay in the CPU's cache (the stamps are 16-bit for the same reason).
 */
const dictionaryTable = new Int16Array(1 << HASH_BITS).fill(-1);
/** inputTable and inputStamp hold the positions of the text being encoded; a stamp other than the call's marks a stale slot. */
const inputTable = new Int32Array(1 << HASH_BITS);
const inputStamp = new Uint16Array(1 << HASH_BITS);
let stamp = 0;

/** encodeWork holds the dictionary followed by the text being encoded; decodeWork the dictionary followed by the text being decoded. */
let encodeWork: Buffer = Buffer.alloc(D + 4096);
let decodeWork: Buffer = Buffer.alloc(D + 4096);
let out: Buffer = Buffer.alloc(4096);
dictionary.copy(encodeWork);
dictionary.copy(decodeWork);

function hashAt(s: Uint8Array, p: number): number {
  return Math.imul(s[p]! | (s[p + 1]! << 8) | (s[p + 2]! << 16) | (s[p + 3]! << 24), 0x9e3779b1) >>> HASH_SHIFT;
}

/** dictionaryPrev chains each dictionary position to the previous one with the same hash. */
const dictionaryPrev = new Int16Array(D).fill(-1);
for (let p = 0; p + MIN_MATCH <= D; p++) {
  const h = hashAt(dictionary, p);
  dictionaryPrev[p] = dictionaryTable[h]!;
  dictionaryTable[h] = p;
}

function grow(buf: Buffer, size: number): Buffer {
  if (buf.length >= size) return buf;
  const next = Buffer.alloc(Math.max(size, buf.length * 2));
  buf.copy(next, 0, 0, D);
  return next;
}

function writeVarint(o: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    o[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  o[at++] = n;
  return at;
}

const DASH = 0x2d;

function isUuidAt(s: Uint8Array, q: number, to: number): boolean {
  // Hex digits are common in JSON (a-f, 0-9) and UUIDs rare: the first dash rules out most places at once.
  if (q + UUID_LENGTH > to || s[q + UUID_DASHES[0]!] !== DASH) return false;
  for (let k = 0, d = 0; k < UUID_LENGTH; k++) {
    if (k === UUID_DASHES[d]) {
      if (s[q + k] !== DASH) return false;
      d++;
    } else if (HEX_VALUE[s[q + k]!]! < 0) return false;
  }
  return true;
}

/** op is the write position in `out` of the encoding under way. */
let op = 0;

function plain(s: Buffer, from: number, to: number): void {
  while (from < to) {
    const len = Math.min(MAX_LITERALS, to - from);
    out[op++] = len - 1;
    // Most literal runs are a few bytes: Buffer#copy's argument checks cost more than copying them one by one.
    if (len >= NATIVE_COPY) {
      out.set(s.subarray(from, from + len), op);
      op += len;
      from += len;
    } else {
      for (let k = 0; k < len; k++) out[op++] = s[from++]!;
    }
  }
}

function hex(s: Buffer, from: number, to: number): void {
  while (from < to) {
    const bytes = Math.min(MAX_HEX_BYTES, (to - from) >> 1);
    out[op++] = HEX_TOKEN | (bytes - 1);
    for (let k = 0; k < bytes; k++, from += 2) out[op++] = (HEX_VALUE[s[from]!]! << 4) | HEX_VALUE[s[from + 1]!]!;
  }
}

function uuid(s: Buffer, from: number): void {
  out[op++] = UUID_TOKEN;
  for (let k = 0; k < UUID_LENGTH; k += 2) {
    if (s[from + k] === DASH) k++;
    out[op++] = (HEX_VALUE[s[from + k]!]! << 4) | HEX_VALUE[s[from + k + 1]!]!;
  }
}

/** literals writes bytes no match covers: runs of plain bytes, with UUIDs and runs of MIN_HEX_RUN or more hex digits packed. */
function literals(s: Buffer, from: number, to: number): void {
  let start = from;
  let q = from;
  while (q < to) {
    if (HEX_VALUE[s[q]!]! < 0) {
      q++;
      continue;
    }
    if (isUuidAt(s, q, to)) {
      plain(s, start, q);
      uuid(s, q);
      q += UUID_LENGTH;
      start = q;
      continue;
    }
    let r = q;
    while (r < to && HEX_VALUE[s[r]!]! >= 0) r++;
    const even = (r - q) & ~1;
    if (even >= MIN_HEX_RUN) {
      plain(s, start, q);
      hex(s, q, q + even);
      start = q + even;
    }
    q = r;
  }
  plain(s, start, to);
}

/** encodeObject compresses JSON text for a BLOB column. */
export function encodeObject(json: string): Buffer {
  // Encoded first: the encoding may replace `out` with a larger buffer.
  const n = encode(json);
  return Buffer.from(out.subarray(0, n));
}

/**
 * encodeObjectBase64 is `encodeObject(json).toString('base64')`, written straight from the encoder's buffer: PostgreSQL's
 * writes send packed values as base64 text, and the copy into a Buffer of their own was a tenth of the encoding's cost.
 */
export function encodeObjectBase64(json: string): string {
  const n = encode(json);
  return out.toString('base64', 0, n);
}

/** encode writes the encoding of `json` into `out` and returns its length. */
function encode(json: string): number {
  const maxBytes = json.length * 3;
  encodeWork = grow(encodeWork, D + maxBytes);
  const s = encodeWork;
  const n = s.write(json, D, 'utf8');
  const end = D + n;
  out = grow(out, n + Math.ceil(n / MAX_LITERALS) + 16);
  out[0] = VERSION;
  op = writeVarint(out, 1, n);
  stamp = (stamp + 1) & 0xffff;
  if (stamp === 0) {
    inputStamp.fill(0);
    stamp = 1;
  }
  let lit = D;
  let p = D;
  const last = end - MIN_MATCH;
  while (p <= last) {
    // A UUID is left to the literals, which pack it whole, rather than matched in fragments.
    if (HEX_VALUE[s[p]!]! >= 0 && isUuidAt(s, p, end)) {
      p += UUID_LENGTH;
      continue;
    }
    const h = hashAt(s, p);
    let bestLen = 0;
    let bestFrom = 0;
    // Candidates: the last position of this hash in the text, then its chain in the dictionary.
    let c = inputStamp[h] === stamp ? inputTable[h]! : -1;
    let tries = 0;
    if (c < 0) {
      c = dictionaryTable[h]!;
      tries = 1;
    }
    while (c >= 0 && tries <= DICTIONARY_CHAIN && p - c <= MAX_DISTANCE) {
      // A candidate that differs at the byte just past the best match so far cannot beat it.
      if (bestLen === 0 || (p + bestLen < end && s[c + bestLen] === s[p + bestLen])) {
        let len = 0;
        while (p + len < end && s[c + len] === s[p + len]) len++;
        if (len > bestLen) {
          bestLen = len;
          bestFrom = c;
        }
      }
      c = tries === 0 ? dictionaryTable[h]! : dictionaryPrev[c]!;
      tries++;
    }
    inputTable[h] = p;
    inputStamp[h] = stamp;
    if (bestLen < MIN_MATCH) {
      p++;
      continue;
    }
    literals(s, lit, p);
    const distance = p - bestFrom;
    let left = bestLen;
    while (left >= MIN_MATCH) {
      const len = Math.min(left, MAX_TOKEN_MATCH);
      out[op++] = 0x80 | (len - MIN_MATCH);
      op = writeVarint(out, op, distance);
      left -= len;
    }
    // A remainder under MIN_MATCH bytes stays for the next token (literals or a match).
    p += bestLen - left;
    // Positions inside a match from the text join the table, so later repeats of them are found; a
    // repeat of dictionary text is found in the dictionary again.
    for (let q = bestFrom < D ? p : p - (bestLen - left) + 1; q < p && q <= last; q++) {
      const hq = hashAt(s, q);
      inputTable[hq] = q;
      inputStamp[hq] = stamp;
    }
    lit = p;
  }
  literals(s, lit, end);
  return op;
}

/** decodeObject restores the JSON text of `encodeObject`; a malformed value is an error naming what is wrong. */
export function decodeObject(blob: Uint8Array): string {
  if (blob[0] !== VERSION) throw new Error(`stored object: unknown encoding ${blob[0] ?? '(empty)'}`);
  let i = 1;
  let n = 0;
  for (let shift = 0; ; shift += 7) {
    const b = blob[i++];
    if (b === undefined || shift > 28) throw new Error('stored object: truncated length');
    n += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  decodeWork = grow(decodeWork, D + n);
  const w = decodeWork;
  const end = D + n;
  let o = D;
  while (i < blob.length) {
    const t = blob[i++]!;
    if (t < HEX_TOKEN) {
      const len = t + 1;
      if (o + len > end || i + len > blob.length) throw new Error('stored object: literals past the end');
      if (len >= NATIVE_COPY) {
        w.set(blob.subarray(i, i + len), o);
        i += len;
        o += len;
      } else {
        for (let k = 0; k < len; k++) w[o++] = blob[i++]!;
      }
      continue;
    }
    if (t === UUID_TOKEN) {
      if (o + UUID_LENGTH > end || i + 16 > blob.length) throw new Error('stored object: a uid past the end');
      for (let k = 0; k < 16; k++) {
        if (k === 4 || k === 6 || k === 8 || k === 10) w[o++] = DASH;
        const b = blob[i++]!;
        w[o++] = HEX_CHAR[b >> 4]!;
        w[o++] = HEX_CHAR[b & 15]!;
      }
      continue;
    }
    if (t < 0x80) {
      const len = (t & 0x3f) + 1;
      if (o + 2 * len > end || i + len > blob.length) throw new Error('stored object: hex digits past the end');
      for (let k = 0; k < len; k++) {
        const b = blob[i++]!;
        w[o++] = HEX_CHAR[b >> 4]!;
        w[o++] = HEX_CHAR[b & 15]!;
      }
      continue;
    }
    const len = (t & 0x7f) + MIN_MATCH;
    let distance = 0;
    for (let shift = 0; ; shift += 7) {
      const b = blob[i++];
      if (b === undefined || shift > 21) throw new Error('stored object: truncated distance');
      distance += (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    let from = o - distance;
    if (distance === 0 || from < 0 || o + len > end) throw new Error('stored object: a copy out of bounds');
    if (distance >= len && len >= NATIVE_COPY) {
      // Most copies are long runs from the dictionary: a native copy when source and target do not overlap.
      w.copyWithin(o, from, from + len);
      o += len;
    } else {
      for (let k = 0; k < len; k++) w[o++] = w[from++]!;
    }
  }
  if (o !== end) throw new Error('stored object: shorter than its length');
  return w.toString('utf8', D, end);
}
