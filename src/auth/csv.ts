/**
 * parseCsv reads RFC 4180 records as Go's encoding/csv does with a variable
 * number of fields and TrimLeadingSpace: quoted fields may hold commas, newlines
 * and doubled quotes; blank lines are skipped. It throws with the line number
 * of a malformed record.
 */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    // A blank line (or a trailing newline) is no record.
    if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] === '\n')) {
      i += text[i] === '\r' ? 2 : 1;
      line++;
      continue;
    }
    const fields: string[] = [];
    for (;;) {
      while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new Error(`line ${start}: extraneous or missing " in quoted-field`);
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') throw new Error(`line ${line}: extraneous or missing " in quoted-field`);
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new Error(`line ${line}: bare " in non-quoted-field`);
          field += text[i];
          i++;
        }
      }
      fields.push(field);
      if (i < n && text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    records.push({ line: start, fields });
  }
  return records;
}
