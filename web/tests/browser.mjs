// Headless-Chromium helpers for tickwise browser tests (playwright-core + Debian's
// /usr/bin/chromium; never `npx playwright install`).
//
//   import { launch, serveDir } from './browser.mjs';
//   const { context, page, close } = await launch();
//   try {
//     await serveDir(context, '/path/to/site');          // http://tickwise.test/...
//     await page.goto('http://tickwise.test/index.html');
//     ...
//   } finally { await close(); }
//
// Pages are answered from disk by `context.route`, so no port, server or DNS is
// needed, and ES modules / WebAssembly.instantiateStreaming work (file:// cannot
// import modules). Note: http://tickwise.test is not a "secure context"; pass
// origin 'https://tickwise.test' to serveDir for APIs that need one
// (crypto.subtle, etc.).
import { chromium } from 'playwright-core';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const CHROMIUM_PATH = process.env.TICKWISE_CHROMIUM || '/usr/bin/chromium';

// --headless is passed explicitly as well: Debian's wrapper script needs it.
// The background-networking flags stop Chromium from flooding the closed network.
// Playwright refuses --user-data-dir in args: the profile is the first argument
// of launchPersistentContext.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches headless Chromium with a fresh, throwaway profile.
 * @param {object} [options] extra launchPersistentContext options (merged in).
 * @returns {Promise<{context: import('playwright-core').BrowserContext,
 *                    page: import('playwright-core').Page,
 *                    close: () => Promise<void>}>}
 */
export async function launch(options = {}) {
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'tickwise-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      ...options,
      args: [...CHROMIUM_ARGS, ...(options.args || [])],
    });
  } catch (err) {
    await rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      await context.close();
    } finally {
      await rm(userDataDir, { recursive: true, force: true });
    }
  };
  return { context, page, close, userDataDir };
}

/** `/proc/PID/stat` fields after the command name: [state, ppid, ...]. */
function procStat(path) {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // the process or thread is gone
  }
}

/**
 * CPU time (user + system, in ms, at the kernel's 10 ms tick) used so far by
 * the main threads of the renderer processes of the Chromium launched with
 * `userDataDir`: the threads that run a page's JavaScript and wasm. Linux
 * only. A benchmark on a machine busy with other work reads this before
 * and after its run: unlike wall time it does not count the time the
 * renderer waited for a core.
 */
export function rendererCpuMs(userDataDir) {
  const procs = new Map(); // pid -> { ppid, cmd }
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const st = procStat(`/proc/${name}/stat`);
    if (!st) continue;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    procs.set(Number(name), { ppid: Number(st[1]), cmd });
  }
  const browsers = [...procs].filter(([, p]) => p.cmd.includes(userDataDir) && !p.cmd.includes('--type=')).map(([pid]) => pid);
  const ours = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 16; p = procs.get(p)?.ppid ?? 0, hops += 1) {
      if (browsers.includes(p)) return true;
    }
    return false;
  };
  const ticksPerMs = 0.1; // USER_HZ = 100 on Linux
  let ms = 0;
  for (const [pid, p] of procs) {
    if (!p.cmd.includes('--type=renderer') || !ours(pid)) continue;
    const st = procStat(`/proc/${pid}/task/${pid}/stat`);
    if (st) ms += (Number(st[11]) + Number(st[12])) / ticksPerMs;
  }
  return ms;
}

export const CONTENT_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

export function contentType(file) {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream';
}

/**
 * Answers every request to `origin` with files under `dir` ('/' and directories
 * map to index.html). Missing files get a 404, except /favicon.ico, which gets an
 * empty 204 so pages do not log a console error. Requests can't escape `dir`.
 * @returns {Promise<() => Promise<void>>} a function that removes the route.
 */
export async function serveDir(context, dir, origin = 'http://tickwise.test') {
  const root = path.resolve(dir);
  const base = new URL(origin);
  const pattern = `${base.origin}/**`;
  const handler = async (route) => {
    const url = new URL(route.request().url());
    let rel;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      return route.fulfill({ status: 400, contentType: 'text/plain', body: 'bad path' });
    }
    let file = path.resolve(root, '.' + path.posix.normalize('/' + rel));
    if (file !== root && !file.startsWith(root + path.sep)) {
      return route.fulfill({ status: 403, contentType: 'text/plain', body: 'forbidden' });
    }
    try {
      if ((await stat(file)).isDirectory()) file = path.join(file, 'index.html');
      const body = await readFile(file);
      return route.fulfill({
        status: 200,
        headers: { 'content-type': contentType(file), 'cache-control': 'no-store' },
        body,
      });
    } catch (err) {
      if (err && (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EISDIR')) {
        if (url.pathname === '/favicon.ico') return route.fulfill({ status: 204, body: '' });
        return route.fulfill({
          status: 404,
          contentType: 'text/plain',
          body: `not found: ${url.pathname}`,
        });
      }
      throw err;
    }
  };
  await context.route(pattern, handler);
  return () => context.unroute(pattern, handler);
}
