// The paged list of core/v1 events that kevents get, events, timeline and lint all read: below the commands, so
// none of them imports another for it.
import type { CoreEvent } from '../../api/index.js';
import type { ReadClient } from '../../client/index.js';

/** CHUNK_SIZE is kubectl's default --chunk-size: lists are read 500 items a page. */
export const CHUNK_SIZE = 500;

/** listAllEvents reads every page of a core/v1 list. */
export async function listAllEvents(
  client: ReadClient,
  options: { namespace: string | undefined; fieldSelector?: string | undefined; labelSelector?: string | undefined; limit?: number },
  onPage?: (read: number) => void,
): Promise<{ items: CoreEvent[]; resourceVersion: string }> {
  const items: CoreEvent[] = [];
  let next: string | undefined;
  let resourceVersion = '';
  do {
    const page = await client.coreV1.list({
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
      ...(options.fieldSelector ? { fieldSelector: options.fieldSelector } : {}),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
      limit: options.limit ?? CHUNK_SIZE,
      ...(next !== undefined ? { continue: next } : {}),
    });
    items.push(...page.items);
    onPage?.(items.length);
    resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
    next = page.metadata.continue || undefined;
  } while (next !== undefined);
  return { items, resourceVersion };
}
