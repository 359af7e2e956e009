// The platform adapter: the browser's page lifecycle, translated into the two
// events the kernel understands (hidden / visible) with a host timestamp.
// The kernel knows nothing about the page; the page knows nothing about how
// the kernel catches up. This file is the whole seam.
//
// Time comes from `now()` (performance.now() by default: the same clock as
// requestAnimationFrame timestamps), never from the event, so a test that
// installs a fake clock controls both frames and visibility.

/**
 * Calls `onChange(hidden, ms)` whenever the document's visibility changes.
 * @param {Document} doc
 * @param {(hidden: boolean, ms: number) => void} onChange
 * @param {() => number} [now]
 * @returns {() => void} unsubscribe
 */
export function wireVisibility(doc, onChange, now = () => performance.now()) {
  const handler = () => onChange(doc.visibilityState === 'hidden', now());
  doc.addEventListener('visibilitychange', handler);
  return () => doc.removeEventListener('visibilitychange', handler);
}

/**
 * A requestAnimationFrame loop that can be started and stopped.
 * `onFrame(ms)` receives the frame's timestamp.
 * @param {(ms: number) => void} onFrame
 */
export function frameLoop(onFrame) {
  let id = null;
  const tick = (ms) => {
    id = requestAnimationFrame(tick);
    onFrame(ms);
  };
  return {
    start() {
      if (id === null) id = requestAnimationFrame(tick);
    },
    stop() {
      if (id !== null) cancelAnimationFrame(id);
      id = null;
    },
    get running() {
      return id !== null;
    },
  };
}

/**
 * Forwards key events on `target` to a page model: `page.key(code, down, ms)`
 * at the event's own `timeStamp` (the default action is prevented for the
 * keys it takes), and `page.releaseAll(now())` when the window loses focus.
 * @param {EventTarget} target
 * @param {{key(code: string, down: boolean, ms: number): boolean, releaseAll(ms: number): void}} page
 * @param {() => number} [now]
 */
export function wireKeys(target, page, now = () => performance.now()) {
  target.addEventListener('keydown', (e) => {
    if (page.key(e.code, true, e.timeStamp)) e.preventDefault();
  });
  target.addEventListener('keyup', (e) => {
    if (page.key(e.code, false, e.timeStamp)) e.preventDefault();
  });
  target.addEventListener('blur', () => page.releaseAll(now()));
}
