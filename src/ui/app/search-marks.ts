/**
 * What the Search view marks in a hit's message: the spans the server's search
 * found its words and phrases at (`messageMarks`, computed by the one
 * implementation the CLI's table marks with), drawn as text nodes.
 */

/** MarkedPart is a piece of a message, marked or not; the pieces joined are the message. */
export interface MarkedPart {
  text: string;
  marked: boolean;
}

/**
 * markParts splits a message into pieces by the served spans of it. The list
 * shows the message trimmed (`toRow`), so the spans, indexes into the message as
 * served, are moved by what the trim took off its start and cut to what it kept.
 */
export function markParts(message: string, spans: readonly (readonly [number, number])[]): MarkedPart[] {
  const lead = message.length - message.trimStart().length;
  const text = message.trim();
  const parts: MarkedPart[] = [];
  let at = 0;
  for (const [s, e] of spans) {
    const start = Math.max(s - lead, at);
    const end = Math.min(e - lead, text.length);
    if (end <= start) continue;
    if (start > at) parts.push({ text: text.slice(at, start), marked: false });
    parts.push({ text: text.slice(start, end), marked: true });
    at = end;
  }
  if (at < text.length || parts.length === 0) parts.push({ text: text.slice(at), marked: false });
  return parts;
}
