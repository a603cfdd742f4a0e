import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  canonicalMicroTime,
  canonicalTime,
  compareMicroTime,
  equalMicroTimeTruncated,
  formatMicroTime,
  formatTime,
  isCanonicalWireTime,
  nowMicroTime,
  parseMicroTime,
  parseTime,
  TimeParseError,
} from './time.js';

const T = '"2006-01-02T15:04:05Z07:00"';
const M = '"2006-01-02T15:04:05.000000Z07:00"';

void describe('canonicalTime accepts what Go time.Parse(RFC3339) accepts', () => {
  const cases: [string, string | null][] = [
    ['2025-06-23T02:57:05Z', '2025-06-23T02:57:05Z'],
    ['2025-06-23T04:57:05+02:00', '2025-06-23T02:57:05Z'],
    ['2025-06-22T23:57:05-03:00', '2025-06-23T02:57:05Z'],
    ['2025-06-23T02:57:05.999999999Z', '2025-06-23T02:57:05Z'],
    ['2025-06-23T02:57:05.1234567891234Z', '2025-06-23T02:57:05Z'],
    ['2025-06-23T02:57:05,5Z', '2025-06-23T02:57:05Z'],
    ['2025-06-23T2:57:05Z', '2025-06-23T02:57:05Z'],
    ['2025-06-23T02:57:05+24:00', '2025-06-22T02:57:05Z'],
    ['2025-06-23T02:57:05+00:60', '2025-06-23T01:57:05Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00Z'],
    ['0001-01-01T00:00:00Z', null],
    ['0001-01-01T00:00:00.5Z', null],
    ['0001-01-01T01:00:00+01:00', null],
    ['0000-01-01T00:30:00+01:00', '-0001-12-31T23:30:00Z'],
    ['9999-12-31T23:59:59-01:00', '10000-01-01T00:59:59Z'],
  ];
  for (const [input, want] of cases) {
    void it(input, () => assert.equal(canonicalTime(input), want));
  }
  void it('null and undefined are the zero time', () => {
    assert.equal(canonicalTime(null), null);
    assert.equal(canonicalTime(undefined), null);
  });
});

void describe('canonicalTime rejects with Go ParseError text', () => {
  const cases: [string, string][] = [
    ['', `parsing time "" as ${T}: cannot parse "" as "2006"`],
    ['20a0-01-01T00:00:00Z', `parsing time "20a0-01-01T00:00:00Z" as ${T}: cannot parse "20a0-01-01T00:00:00Z" as "2006"`],
    ['2020-9-11T02:42:23Z', `parsing time "2020-9-11T02:42:23Z" as ${T}: cannot parse "9-11T02:42:23Z" as "01"`],
    ['2020-09-11 02:42:23Z', `parsing time "2020-09-11 02:42:23Z" as ${T}: cannot parse " 02:42:23Z" as "T"`],
    ['2020-09-11t02:42:23Z', `parsing time "2020-09-11t02:42:23Z" as ${T}: cannot parse "t02:42:23Z" as "T"`],
    ['2020-09-11T02:42:23', `parsing time "2020-09-11T02:42:23" as ${T}: cannot parse "" as "Z07:00"`],
    ['2020-09-11T02:42:23z', `parsing time "2020-09-11T02:42:23z" as ${T}: cannot parse "z" as "Z07:00"`],
    ['2020-09-11T02:42:23+0100', `parsing time "2020-09-11T02:42:23+0100" as ${T}: cannot parse "+0100" as "Z07:00"`],
    ['2020-09-11T02:42:23*01:00', `parsing time "2020-09-11T02:42:23*01:00" as ${T}: cannot parse "*01:00" as "Z07:00"`],
    ['2020-09-11T02:42:23.Z', `parsing time "2020-09-11T02:42:23.Z" as ${T}: cannot parse ".Z" as "Z07:00"`],
    ['2020-09-11T02:42Z', `parsing time "2020-09-11T02:42Z" as ${T}: cannot parse "Z" as ":"`],
    ['2020-13-11T02:42:23Z', 'parsing time "2020-13-11T02:42:23Z": month out of range'],
    ['2020-00-11T02:42:23Z', 'parsing time "2020-00-11T02:42:23Z": month out of range'],
    ['2023-02-29T02:42:23Z', 'parsing time "2023-02-29T02:42:23Z": day out of range'],
    ['2023-02-00T02:42:23Z', 'parsing time "2023-02-00T02:42:23Z": day out of range'],
    ['2020-09-11T24:00:00Z', 'parsing time "2020-09-11T24:00:00Z": hour out of range'],
    ['2020-09-11T02:60:00Z', 'parsing time "2020-09-11T02:60:00Z": minute out of range'],
    ['2016-12-31T23:59:60Z', 'parsing time "2016-12-31T23:59:60Z": second out of range'],
    ['2020-09-11T02:42:23+25:00', 'parsing time "2020-09-11T02:42:23+25:00": time zone offset hour out of range'],
    ['2020-09-11T02:42:23+01:61', 'parsing time "2020-09-11T02:42:23+01:61": time zone offset minute out of range'],
    ['2020-09-11T02:42:23Zjunk', 'parsing time "2020-09-11T02:42:23Zjunk": extra text: "junk"'],
    ['2020-09-11T02:42:23Z\n', 'parsing time "2020-09-11T02:42:23Z\\x0a": extra text: "\\x0a"'],
    ['é', `parsing time "\\xc3\\xa9" as ${T}: cannot parse "\\xc3\\xa9" as "2006"`],
    ['"x', `parsing time "\\"x" as ${T}: cannot parse "\\"x" as "2006"`],
  ];
  for (const [input, message] of cases) {
    void it(JSON.stringify(input), () => {
      assert.throws(() => canonicalTime(input), (e: unknown) => e instanceof TimeParseError && e.message === message);
      assert.throws(() => parseTime(input), { message });
    });
  }
});

void describe('canonicalMicroTime accepts only the six-digit layout', () => {
  const cases: [string, string | null][] = [
    ['2025-06-23T02:57:05.123456Z', '2025-06-23T02:57:05.123456Z'],
    ['2025-06-23T04:57:05.000001+02:00', '2025-06-23T02:57:05.000001Z'],
    ['2025-06-23T02:57:05,123456Z', '2025-06-23T02:57:05.123456Z'],
    ['2025-06-23T2:57:05.123456Z', '2025-06-23T02:57:05.123456Z'],
    ['0001-01-01T00:00:00.000000Z', null],
    ['0001-01-01T00:00:00.000001Z', '0001-01-01T00:00:00.000001Z'],
  ];
  for (const [input, want] of cases) {
    void it(input, () => assert.equal(canonicalMicroTime(input), want));
  }
});

void describe('canonicalMicroTime rejects with Go ParseError text', () => {
  const cases: [string, string][] = [
    // kubernetes#94748: the exact message clients saw.
    ['2020-09-11T02:42:23Z', `parsing time "2020-09-11T02:42:23Z" as ${M}: cannot parse "Z" as ".000000"`],
    ['2020-09-11T02:42:23.123Z', `parsing time "2020-09-11T02:42:23.123Z" as ${M}: cannot parse ".123Z" as ".000000"`],
    ['2020-09-11T02:42:23.1234567Z', `parsing time "2020-09-11T02:42:23.1234567Z" as ${M}: cannot parse "7Z" as "Z07:00"`],
    ['2020-09-11T02:42:23.123456789Z', `parsing time "2020-09-11T02:42:23.123456789Z" as ${M}: cannot parse "789Z" as "Z07:00"`],
    ['2020-09-11T02:42:23.12a456Z', `parsing time "2020-09-11T02:42:23.12a456Z" as ${M}: cannot parse ".12a456Z" as ".000000"`],
    ['2020-09-11T02:42:23x123456Z', `parsing time "2020-09-11T02:42:23x123456Z" as ${M}: cannot parse "x123456Z" as ".000000"`],
    ['2020-09-11T02:42:23.-00001Z', 'parsing time "2020-09-11T02:42:23.-00001Z": fractional second out of range'],
    ['2020-09-11T02:42:23.123456', `parsing time "2020-09-11T02:42:23.123456" as ${M}: cannot parse "" as "Z07:00"`],
  ];
  for (const [input, message] of cases) {
    void it(input, () => {
      assert.throws(() => canonicalMicroTime(input), { name: 'TimeParseError', message });
      assert.throws(() => parseMicroTime(input), { message });
    });
  }
});

void describe('formatTime and formatMicroTime', () => {
  void it('formatTime truncates to the second in UTC', () => {
    assert.equal(formatTime(Date.UTC(2025, 5, 23, 2, 57, 5, 999)), '2025-06-23T02:57:05Z');
    assert.equal(formatTime(new Date('2025-06-23T04:57:05.5+02:00')), '2025-06-23T02:57:05Z');
    assert.equal(formatTime(-1), '1969-12-31T23:59:59Z');
  });
  void it('formatTime gives null for nothing and for the zero time', () => {
    assert.equal(formatTime(null), null);
    assert.equal(formatTime(undefined), null);
    const goZeroMs = -62135596800000;
    assert.equal(formatTime(goZeroMs), null);
    assert.equal(formatTime(goZeroMs + 999), null);
    assert.equal(formatTime(goZeroMs + 1000), '0001-01-01T00:00:01Z');
    assert.equal(formatMicroTime(goZeroMs), null);
    assert.equal(formatMicroTime({ epochMicros: -62135596800000000n + 1n }), '0001-01-01T00:00:00.000001Z');
  });
  void it('formatMicroTime keeps six digits from each input form', () => {
    assert.equal(formatMicroTime(1750647425123), '2025-06-23T02:57:05.123000Z');
    assert.equal(formatMicroTime(1750647425123.456), '2025-06-23T02:57:05.123456Z');
    assert.equal(formatMicroTime({ epochMicros: 1750647425123456n }), '2025-06-23T02:57:05.123456Z');
    assert.equal(formatMicroTime({ epochMicros: -1n }), '1969-12-31T23:59:59.999999Z');
    assert.equal(formatMicroTime(new Date(0)), '1970-01-01T00:00:00.000000Z');
    assert.equal(formatMicroTime(null), null);
  });
  void it('formatTime refuses an invalid Date', () => {
    assert.throws(() => formatTime(new Date(Number.NaN)), RangeError);
  });
  void it('nowMicroTime reads the given clock', () => {
    assert.equal(nowMicroTime({ now: () => 1750647425123.25 }), '2025-06-23T02:57:05.123250Z');
    assert.match(nowMicroTime(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });
});

void describe('parseTime and parseMicroTime', () => {
  void it('parseTime returns epoch milliseconds', () => {
    assert.equal(parseTime('2025-06-23T02:57:05Z'), Date.UTC(2025, 5, 23, 2, 57, 5));
    assert.equal(parseTime('2025-06-23T02:57:05.987654Z'), Date.UTC(2025, 5, 23, 2, 57, 5, 987));
  });
  void it('parseMicroTime keeps microseconds exactly', () => {
    const p = parseMicroTime('2025-06-23T02:57:05.123456Z');
    assert.equal(p.epochMicros, 1750647425123456n);
    assert.equal(p.epochMs, 1750647425123);
    assert.equal(parseMicroTime('1969-12-31T23:59:59.999999Z').epochMicros, -1n);
  });
});

void describe('compareMicroTime and equalMicroTimeTruncated', () => {
  void it('orders by instant, offsets included, null first', () => {
    assert.equal(compareMicroTime('2025-06-23T02:57:05.000001Z', '2025-06-23T02:57:05.000002Z'), -1);
    assert.equal(compareMicroTime('2025-06-23T02:57:05.000002Z', '2025-06-23T02:57:05.000001Z'), 1);
    assert.equal(compareMicroTime('2025-06-23T04:57:05.000001+02:00', '2025-06-23T02:57:05.000001Z'), 0);
    assert.equal(compareMicroTime(null, '0001-01-01T00:00:00.000001Z'), -1);
    assert.equal(compareMicroTime(null, undefined), 0);
  });
  void it('ignores differences below a microsecond only', () => {
    assert.equal(equalMicroTimeTruncated('2025-06-23T02:57:05.123456Z', '2025-06-23T02:57:05.123456999Z'), true);
    assert.equal(equalMicroTimeTruncated('2025-06-23T04:57:05.123456+02:00', '2025-06-23T02:57:05.123456Z'), true);
    assert.equal(equalMicroTimeTruncated('2025-06-23T02:57:05.123456Z', '2025-06-23T02:57:05.123457Z'), false);
    assert.equal(equalMicroTimeTruncated(null, null), true);
    assert.equal(equalMicroTimeTruncated(null, '2025-06-23T02:57:05.123456Z'), false);
  });
});

void describe('isCanonicalWireTime', () => {
  // The pattern it replaced, with the same date checks: what it must answer for every string.
  const PATTERN = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d{6})?Z$/;
  const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  function byPattern(s: string, length: 20 | 27): boolean {
    if (s.length !== length) return false;
    const m = PATTERN.exec(s);
    if (m === null) return false;
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (y < 1000 || mo < 1 || mo > 12 || d < 1 || Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
    return d <= (mo === 2 && leap ? 29 : DAYS[mo - 1]!);
  }

  it('answers as the pattern does for canonical times and for every one-character change of them', () => {
    const alphabet = '0123456789-:TZ.z+ /a\u0660';
    let seed = 7;
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
    const bases = ['2024-02-29T23:59:59Z', '2023-02-29T00:00:00Z', '1000-01-01T00:00:00Z', '0999-12-31T23:59:59Z', '2026-12-05T10:00:00.123456Z', '2026-04-31T10:00:00.000000Z'];
    let tested = 0;
    for (const base of bases) {
      for (let i = 0; i < base.length; i++) {
        for (const c of alphabet) {
          const s = base.slice(0, i) + c + base.slice(i + 1);
          for (const length of [20, 27] as const) {
            assert.equal(isCanonicalWireTime(s, length), byPattern(s, length), `${JSON.stringify(s)} as ${length}`);
            tested++;
          }
        }
      }
    }
    for (let i = 0; i < 20000; i++) {
      const y = 900 + Math.floor(rand() * 9200);
      const pad = (n: number, w: number): string => String(n).padStart(w, '0');
      const s = `${pad(y, 4)}-${pad(Math.floor(rand() * 14), 2)}-${pad(Math.floor(rand() * 33), 2)}T${pad(Math.floor(rand() * 26), 2)}:${pad(Math.floor(rand() * 62), 2)}:${pad(Math.floor(rand() * 62), 2)}${rand() < 0.5 ? `.${pad(Math.floor(rand() * 1e6), 6)}` : ''}Z`;
      for (const length of [20, 27] as const) assert.equal(isCanonicalWireTime(s, length), byPattern(s, length), s);
    }
    assert.ok(tested > 1000);
  });
});
