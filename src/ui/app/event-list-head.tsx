/**
 * EventListHead labels the columns of an event list (the live view's and the search's rows share one layout); it is
 * hidden from screen readers, which read each row's own labels, and drawn only where the rows are laid out in columns.
 */
export function EventListHead() {
  return (
    <div class="event head" aria-hidden="true">
      <span class="c-age">Last seen</span>
      <span class="c-type">Type</span>
      <span class="c-reason">Reason</span>
      <span class="c-object">Object</span>
      <span class="c-ns">Namespace</span>
      <span class="c-count">Count</span>
      <span class="c-message">Message</span>
    </div>
  );
}
