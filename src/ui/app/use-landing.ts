import { useEffect, useState } from 'preact/hooks';
import { incidentWindow } from '../../api/index.js';
import { getIncidents } from './client.js';
import type { Preloaded } from './hooks.js';
import { incidentsKey } from './incident-list.js';
import { DEFAULT_WINDOW, parseRoute } from './route.js';
import type { Navigate } from './use-route.js';

/** Landing is whether the first view is still being picked, and the incidents read to pick it. */
export interface Landing {
  deciding: boolean;
  preloaded: Preloaded | undefined;
}

/** isBare tells a location that names no view: the UI opened at `/`. */
function isBare(hash: string): boolean {
  return hash === '' || hash === '#' || hash === '#/';
}

/**
 * useLanding picks the first view when the UI opens with no route: the
 * Incidents view when the archive has incidents in the default window, else
 * the live view as before. One request, whose answer the Incidents view shows
 * without asking again; a failed request lands where the UI always did.
 */
export function useLanding(navigate: Navigate): Landing {
  const [landing, setLanding] = useState<Landing>(() => ({ deciding: isBare(location.hash), preloaded: undefined }));
  useEffect(() => {
    if (!landing.deciding) return;
    const abort = new AbortController();
    getIncidents({ window: incidentWindow({ since: DEFAULT_WINDOW }, Date.now()), signal: abort.signal }).then(
      (list) => {
        // The reader may have picked a view meanwhile: theirs stands.
        if (list.incidents.length === 0 || !isBare(location.hash)) {
          setLanding({ deciding: false, preloaded: undefined });
          return;
        }
        setLanding({ deciding: false, preloaded: { key: incidentsKey(parseRoute('#/incidents')), list, at: Date.now() } });
        navigate({ view: 'incidents' });
      },
      () => {
        if (!abort.signal.aborted) setLanding({ deciding: false, preloaded: undefined });
      },
    );
    return () => abort.abort();
  }, []);
  return landing;
}
