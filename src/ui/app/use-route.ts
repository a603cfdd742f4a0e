import { useEffect, useState } from 'preact/hooks';
import { formatRoute, parseRoute } from './route.js';
import type { Route } from './route.js';

/** Navigate changes the route; `push` adds a history entry (view switches), otherwise it replaces (typing in a filter). */
export type Navigate = (patch: Partial<Route>, push?: boolean) => void;

/** useRoute is the current route and a way to change it, kept in sync with the location hash. */
export function useRoute(): [Route, Navigate] {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    addEventListener('popstate', onChange);
    return () => {
      removeEventListener('hashchange', onChange);
      removeEventListener('popstate', onChange);
    };
  }, []);
  const navigate: Navigate = (patch, push = false) => {
    const next = { ...parseRoute(location.hash), ...patch };
    if (patch.filters) next.filters = { ...next.filters, ...patch.filters };
    const hash = formatRoute(next);
    if (push) history.pushState(null, '', hash);
    else history.replaceState(null, '', hash);
    setRoute(parseRoute(hash));
  };
  return [route, navigate];
}
