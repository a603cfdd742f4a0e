import { WINDOWS } from './route.js';
import type { Route } from './route.js';
import type { Navigate } from './use-route.js';

/** WindowPicker picks the look-back window of the dashboard, the search and the incidents, kept in the URL. */
export function WindowPicker({ route, navigate }: { route: Route; navigate: Navigate }) {
  return (
    <div class="segmented" role="group" aria-label="Window">
      {Object.keys(WINDOWS).map((w) => (
        <button key={w} type="button" aria-pressed={route.window === w} onClick={() => navigate({ window: w })}>
          {w}
        </button>
      ))}
    </div>
  );
}
