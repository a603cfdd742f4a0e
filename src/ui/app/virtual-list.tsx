import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** VirtualListProps configure a VirtualList. */
export interface VirtualListProps<T> {
  id: string;
  items: readonly T[];
  rowHeight: number;
  label: string;
  renderRow: (item: T, index: number) => ComponentChildren;
  /** onActivate runs on Enter or click of a row. */
  onActivate?: (item: T, index: number) => void;
  /** onScrollTop reports the scroll offset, so a live view can hold still while the reader scrolls. */
  onScrollTop?: (top: number) => void;
  empty?: ComponentChildren;
}

// Rows rendered beyond the viewport on each side, so fast scrolling rarely shows blank space.
const OVERSCAN = 8;

/**
 * VirtualList renders only the rows in view of a fixed-row-height list, so a
 * list of 100,000 events costs as much as one of 40. It is an ARIA listbox
 * with an active descendant: arrows, Page Up/Down, Home/End move, Enter opens.
 */
export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, rowHeight } = props;
  const box = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const [height, setHeight] = useState(600);
  const [active, setActive] = useState(-1);

  useLayoutEffect(() => {
    const el = box.current;
    if (el === null) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    if (active >= items.length) setActive(items.length - 1);
  }, [items.length, active]);

  const onScroll = (): void => {
    const t = box.current?.scrollTop ?? 0;
    setTop(t);
    props.onScrollTop?.(t);
  };

  const moveTo = (i: number): void => {
    const el = box.current;
    if (el === null || items.length === 0) return;
    const next = Math.max(0, Math.min(items.length - 1, i));
    setActive(next);
    const y = next * rowHeight;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = y + rowHeight - el.clientHeight;
  };

  const page = Math.max(1, Math.floor(height / rowHeight) - 1);
  const onKeyDown = (e: KeyboardEvent): void => {
    const keys: Record<string, () => void> = {
      ArrowDown: () => moveTo(active + 1),
      ArrowUp: () => moveTo(active - 1),
      PageDown: () => moveTo(active + page),
      PageUp: () => moveTo(active - page),
      Home: () => moveTo(0),
      End: () => moveTo(items.length - 1),
      Enter: () => {
        const item = items[active];
        if (item !== undefined) props.onActivate?.(item, active);
      },
    };
    const fn = keys[e.key];
    if (fn !== undefined) {
      e.preventDefault();
      fn();
    }
  };

  const start = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
  const end = Math.min(items.length, Math.ceil((top + height) / rowHeight) + OVERSCAN);
  const rows = [];
  for (let i = start; i < end; i++) {
    const item = items[i]!;
    rows.push(
      <div
        key={i}
        id={`${props.id}-row-${i}`}
        role="option"
        aria-selected={i === active}
        aria-posinset={i + 1}
        aria-setsize={items.length}
        class={i === active ? 'vrow active' : 'vrow'}
        style={{ transform: `translateY(${i * rowHeight}px)`, height: `${rowHeight}px` }}
        onClick={() => {
          setActive(i);
          props.onActivate?.(item, i);
        }}
      >
        {props.renderRow(item, i)}
      </div>,
    );
  }
  return (
    <div
      ref={box}
      id={props.id}
      class="vlist"
      role="listbox"
      tabIndex={0}
      aria-label={props.label}
      aria-activedescendant={active >= start && active < end ? `${props.id}-row-${active}` : undefined}
      onScroll={onScroll}
      onKeyDown={onKeyDown}
      onFocus={() => {
        if (active < 0 && items.length > 0) setActive(Math.floor(top / rowHeight));
      }}
    >
      {items.length === 0 ? (
        <div class="empty">{props.empty}</div>
      ) : (
        <div class="vspacer" style={{ height: `${items.length * rowHeight}px` }}>
          {rows}
        </div>
      )}
    </div>
  );
}
