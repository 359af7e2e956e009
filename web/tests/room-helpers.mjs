// What the room-page browser tests share (web/tests/room.mjs for the horde's
// room page, web/tests/duel-room.mjs for the duel's): a room server started
// before the tests and stopped after them, headless Chromium tabs on its
// room page, polling, key presses, and `verify` of a replay a tab recorded.
// Not a test file itself: `node --test` runs the two files that import it.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from './browser.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Chromium offers interface addresses (not mDNS names) as host candidates, so
// the two processes find each other on the namespace's veth address.
export const CHROMIUM = { args: ['--disable-features=WebRtcHideLocalIpsWithMdns'] };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `f` until it returns something truthy (returned), or throws after `timeoutMs`. */
export async function until(what, f, timeoutMs = 20_000, everyMs = 100) {
  const t0 = Date.now();
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * The binary `envValue` names (relative to the repository), else built with
 * `cargo build --release --quiet <cargoArgs>` and found at target/release/<name>.
 */
export function cargoBin(envValue, cargoArgs, name) {
  if (envValue) return path.resolve(ROOT, envValue);
  const r = spawnSync('cargo', ['build', '--release', '--quiet', ...cargoArgs], { cwd: ROOT, stdio: 'inherit' });
  assert.equal(r.status, 0, `cargo build --release ${cargoArgs.join(' ')} failed`);
  return path.join(ROOT, 'target/release', name);
}

/**
 * Registers the `before` and `after` hooks of a room test file: checks it
 * runs inside the test's network namespace and that the pages are built,
 * starts `<bin> serve --port PORT --dir DIST`, waits for its room page, and
 * at the end stops it, removes the temporary directory and writes `report`
 * to out/<reportName> (and prints it). Returns the live context: `origin`,
 * and, once `before` ran, `bin`, `server` (the child process) and `tmp`.
 *
 * `o`: `{ label, testFile, dist, files, port, bin: () => path, tmpPrefix,
 * reportName, report }`.
 */
export function roomServer(o) {
  const ctx = { label: o.label, origin: `http://127.0.0.1:${o.port}`, bin: null, server: null, tmp: null };
  before(async () => {
    if (process.env.TICKWISE_IN_NETNS !== '1') {
      throw new Error(`run inside the test namespace: bash web/tests/netns.sh node --test ${o.testFile}`);
    }
    for (const f of o.files) {
      if (!existsSync(path.join(o.dist, f))) throw new Error(`${path.join(o.dist, f)} is missing: run \`bash .ci/build-web.sh\` first`);
    }
    ctx.bin = o.bin();
    ctx.tmp = mkdtempSync(path.join(tmpdir(), o.tmpPrefix));
    ctx.server = spawn(ctx.bin, ['serve', '--port', String(o.port), '--dir', o.dist], { stdio: ['ignore', 'inherit', 'inherit'] });
    await until(`${o.label} serve`, async () => {
      try {
        return (await fetch(`${ctx.origin}/room.html`)).ok;
      } catch {
        return false;
      }
    });
  });
  after(() => {
    if (ctx.server) ctx.server.kill();
    if (ctx.tmp) rmSync(ctx.tmp, { recursive: true, force: true });
    mkdirSync(path.join(ROOT, 'out'), { recursive: true });
    writeFileSync(path.join(ROOT, 'out', o.reportName), `${JSON.stringify(o.report, null, 2)}\n`);
    console.log(`${o.reportName}: ${JSON.stringify(o.report, null, 2)}`);
  });
  return ctx;
}

/** A headless Chromium tab on the server's room page (`query` after room.html), once the page is ready. */
export async function openTab(ctx, query) {
  const t = await launch(CHROMIUM);
  t.page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await t.page.goto(`${ctx.origin}/room.html${query}`);
  await t.page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  return t;
}

/** The page's netplay state (window.__tickwiseNet.state()). */
export const state = (t) => t.page.evaluate(() => window.__tickwiseNet.state());

/** Holds `key` for `ms` of real time on tab `t`'s own keyboard. */
export async function hold(t, key, ms) {
  await t.page.keyboard.down(key);
  await sleep(ms);
  await t.page.keyboard.up(key);
}

/** Writes a replay a tab recorded (base64) to the temporary directory as `name` and checks that `<bin> verify` accepts it; its stdout. */
export function verifyReplay(ctx, b64, name) {
  const file = path.join(ctx.tmp, name);
  writeFileSync(file, Buffer.from(b64, 'base64'));
  const r = spawnSync(ctx.bin, ['verify', file], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${ctx.label} verify ${name}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}
