// Starts a page's `boot()` and shows a failure in the page's status line
// instead of leaving a blank page (the error is rethrown for the console).

/** @param {() => Promise<unknown>} boot */
export function start(boot) {
  boot().catch((err) => {
    const el = document.getElementById('status');
    if (el) {
      el.textContent = `failed to start: ${err && err.message ? err.message : err}`;
      el.className = 'mono err';
    }
    throw err;
  });
}
