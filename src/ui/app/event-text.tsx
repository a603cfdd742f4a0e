import { escapeParts } from '../../api/index.js';
import type { MarkedPart } from './search-marks.js';

/** EventTextProps say what an EventText shows: a value, or a message in the search's marked parts. */
export interface EventTextProps {
  /** text is the value as the event wrote it; ignored when `parts` is given. */
  text?: string;
  /** parts are a message split by the search's marks (markParts); their marked pieces are drawn in `<mark>`. */
  parts?: readonly MarkedPart[];
  /** multiline keeps TAB and LF as they are (a cell that wraps); else they are shown as `^I` and `^J`, as the CLI's table cells show them. */
  multiline?: boolean;
}

function Escaped({ text, multiline }: { text: string; multiline: boolean }) {
  return (
    <>
      {escapeParts(text, { line: !multiline }).map((p) => (p.control ? <span class="ctl">{p.text}</span> : p.text))}
    </>
  );
}

/**
 * EventText shows text an event wrote (a stranger's): in a `<bdi>`, so its
 * right-to-left letters cannot reorder the cells and words around it, with
 * every character that a terminal acts on or that reorders or hides text
 * (bidi controls, zero-width characters) shown as the CLI shows it
 * (escapeParts, the rule of src/api/escape.ts), each as a marker drawn apart
 * from the text, never obeyed. A search's marks lie on the text as written, so
 * each marked piece is escaped on its own, as `kevents search` escapes around
 * its marks.
 */
export function EventText({ text = '', parts, multiline = false }: EventTextProps) {
  return (
    <bdi class="ev">
      {parts === undefined ? (
        <Escaped text={text} multiline={multiline} />
      ) : (
        parts.map((p) => (p.marked ? <mark class="hit"><Escaped text={p.text} multiline={multiline} /></mark> : <Escaped text={p.text} multiline={multiline} />))
      )}
    </bdi>
  );
}
