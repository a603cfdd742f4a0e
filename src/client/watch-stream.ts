import type { IncomingMessage } from 'node:http';
import type { WatchEvent } from '../api/index.js';

/**
 * readWatchStream yields the frames of a watch response: one JSON object per
 * line. It ends when the server closes the stream; an unreadable line is an
 * error, as a half-understood stream cannot be trusted.
 */
export async function* readWatchStream<T>(res: IncomingMessage): AsyncGenerator<WatchEvent<T>> {
  let buffered = '';
  res.setEncoding('utf8');
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (line !== '') yield parseFrame<T>(line);
      }
    }
    const rest = buffered.trim();
    if (rest !== '') yield parseFrame<T>(rest);
  } finally {
    res.destroy();
  }
}

function parseFrame<T>(line: string): WatchEvent<T> {
  try {
    return JSON.parse(line) as WatchEvent<T>;
  } catch (e) {
    throw new Error(`watch: unreadable frame ${JSON.stringify(line.slice(0, 80))}`, { cause: e });
  }
}
