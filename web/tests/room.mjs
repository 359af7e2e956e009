// Browser tests for the room page (web/src/room.html): two headless Chromium
// processes in one room of a real `tickwise serve`, over WebRTC data channels
// or the server's relay. Run inside a network namespace of the test's own
// (web/tests/netns.sh: WebRTC traffic never reaches the machine's real
// interfaces; see docs/browser.md, "The room page"):
//
//   bash .ci/build-web.sh
//   bash web/tests/netns.sh node --test web/tests/room.mjs
//
// Environment:
//   TICKWISE_BIN          the tickwise binary (default: `cargo build --release -p
//                         tickwise-cli`, then target/release/tickwise)
//   TICKWISE_WEB_DIST     the built pages (default web/dist)
//   TICKWISE_ROOM_SECONDS length of the two-tab direct and relay matches (default 60 s; the
//                         mixed and hidden-tab matches are 20 s each)
//   TICKWISE_ROOM_ONLY    run only the tests whose name contains this
//
// Writes the measured figures to out/room-report.json and prints them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, cargoBin, hold, openTab, roomServer, sleep, state, until, verifyReplay } from './room-helpers.mjs';

const DIST = path.resolve(process.env.TICKWISE_WEB_DIST || path.join(ROOT, 'web/dist'));
const PORT = 18080; // inside the test's own namespace: nothing else listens there
const TICK_HZ = 30; // the horde's config/horde.json
const MATCH_S = Number(process.env.TICKWISE_ROOM_SECONDS || 60);
const SHORT_S = 20;
const ONLY = process.env.TICKWISE_ROOM_ONLY || '';

const report = {};

const ctx = roomServer({
  label: 'tickwise',
  testFile: 'web/tests/room.mjs',
  dist: DIST,
  files: ['room.html', 'room.js', 'pkg/tickwise_web_bg.wasm'],
  port: PORT,
  bin: () => cargoBin(process.env.TICKWISE_BIN, ['-p', 'tickwise-cli'], 'tickwise'),
  tmpPrefix: 'tickwise-room-',
  reportName: 'room-report.json',
  report,
});

const tab = (query) => openTab(ctx, query);

async function createRoom(t, opts) {
  return t.page.evaluate((o) => window.__tickwiseNet.create(o), opts);
}

/** Two tabs in a new room, both in the lobby, channels open unless relay. */
async function twoTabs({ seconds, relay = false, disconnectAfter = undefined }) {
  const q = relay ? '?relay=1' : '';
  const a = await tab(q);
  const code = await createRoom(a, { players: 2, ticks: seconds * TICK_HZ, disconnectAfter });
  const b = await tab(`?room=${code}${relay ? '&relay=1' : ''}`);
  for (const t of [a, b]) await until('welcome', async () => (await state(t)).lobby.slot !== null);
  if (!relay) {
    for (const t of [a, b]) {
      await until('an open data channel', async () => (await state(t)).lobby.members.some((m) => m.channel));
    }
  }
  return { a, b, code };
}

async function startMatch(tabs) {
  for (const t of tabs) await t.page.evaluate(() => window.__tickwiseNet.ready());
  for (const t of tabs) await until('the match', async () => (await state(t)).phase === 'playing');
}

async function finish(tabs, seconds) {
  for (const t of tabs) {
    await until('the end of the match', async () => (await state(t)).finished, (seconds + 30) * 1000, 250);
  }
  return Promise.all(tabs.map(state));
}

const verify = (b64, name) => verifyReplay(ctx, b64, name);

/** Per peer: datagrams and bytes per second this tab sent, over the match. */
function traffic(s) {
  const secs = s.currentTick / s.tickHz;
  return s.connection.peers.map((p) => ({
    to: p.slot,
    path: p.path,
    datagramsPerS: +((p.sentDirect + p.sentRelay) / secs).toFixed(1),
    bytesPerS: Math.round((p.sentDirectBytes + p.sentRelayBytes) / secs),
    direct: p.sentDirect,
    relay: p.sentRelay,
    unsent: p.unsent,
  }));
}

// Input-to-remote-apply latency in ticks: a key pressed at tick n is this
// player's input for tick n + inputDelay; the other tab applies it when it
// simulates that tick if it has arrived, or later by rollback, `lag` ticks
// late (the page samples current − confirmed tick at every simulated tick).
/** CPU time (user + system) `tickwise serve` has used, ms (Linux /proc; 100 ticks a second). */
function serverCpuMs() {
  const f = readFileSync(`/proc/${ctx.server.pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const lagMean = (s) => +(s.inputDelay + s.lag.sum / s.lag.samples).toFixed(2);

/** The scripted keys: tab A left/right, tab B up/down, never the other's. */
async function playScript(a, b, seconds) {
  const rounds = Math.max(1, Math.floor((seconds - 4) / 4));
  for (let i = 0; i < rounds; i += 1) {
    await Promise.all([
      hold(a, i % 2 ? 'ArrowLeft' : 'ArrowRight', i % 2 ? 1000 : 1500),
      hold(b, i % 2 ? 'ArrowUp' : 'ArrowDown', i % 2 ? 700 : 1300),
    ]);
    await sleep(2000);
  }
}

/** Freezes tab `t`'s main thread for `ms` (see the frozen-tab test). */
async function freeze(t, ms) {
  const cdp = await t.context.newCDPSession(t.page);
  await cdp.send('Debugger.enable');
  await cdp.send('Debugger.pause');
  await sleep(ms);
  await cdp.send('Debugger.resume');
  await cdp.send('Debugger.disable');
  await cdp.detach();
}

/** Checks a finished two-tab match and returns its figures. */
async function checkMatch(a, b, start, [sa, sb], seconds) {
  for (const s of [sa, sb]) {
    assert.equal(s.desyncs, 0, JSON.stringify(s));
    assert.equal(s.confirmedTick, seconds * TICK_HZ);
  }
  assert.equal(sa.confirmedChecksum, sb.confirmedChecksum);
  assert.deepEqual(sa.heroes, sb.heroes);
  // Each hero moved only by its own tab's keys: A's hero (slot 0) only
  // along x, B's (slot 1) only along y, in whole steps of playerSpeed
  // (768/256 px a tick).
  const [h0, h1] = [sa.heroes[sa.slot], sa.heroes[sb.slot]];
  const [s0, s1] = [start.heroes[sa.slot], start.heroes[sb.slot]];
  assert.equal(h0.y, s0.y, 'hero 0 moved along y: tab B keys reached it');
  assert.notEqual(h0.x, s0.x, 'hero 0 never moved');
  assert.equal((h0.x - s0.x) % 768, 0);
  assert.equal(h1.x, s1.x, 'hero 1 moved along x: tab A keys reached it');
  assert.notEqual(h1.y, s1.y, 'hero 1 never moved');
  assert.equal((h1.y - s1.y) % 768, 0);
  // Both tabs' replays: the same bytes (so the same inputs), and each
  // verifies natively.
  const [ra, rb] = await Promise.all([a, b].map((t) => t.page.evaluate(() => window.__tickwiseNet.replay())));
  assert.equal(ra, rb, 'the two tabs recorded different replays');
  const out = verify(ra, 'a.twr');
  verify(rb, 'b.twr');
  assert.match(out, new RegExp(sa.confirmedChecksum), 'verify does not end on the confirmed checksum');
  return {
    inputToRemoteApplyTicks: { a: lagMean(sa), b: lagMean(sb), maxA: sa.inputDelay + sa.lag.max, maxB: sb.inputDelay + sb.lag.max },
    rttTicks: { a: sa.rttTicks, b: sb.rttTicks },
    traffic: { a: traffic(sa), b: traffic(sb) },
  };
}

const named = (name, f) => (ONLY && !name.includes(ONLY) ? test.skip(name, f) : test(name, f));

describe('room page', { concurrency: false }, () => {
  named(`two Chromium processes, one room, direct data channels, ${MATCH_S} s`, async () => {
    const { a, b } = await twoTabs({ seconds: MATCH_S });
    try {
      await startMatch([a, b]);
      const cpu0 = serverCpuMs();
      const t0 = Date.now();
      const start = await state(a);
      assert.deepEqual([start.slot, (await state(b)).slot], [0, 1]);
      await playScript(a, b, MATCH_S);
      const end = await finish([a, b], MATCH_S);
      for (const s of end) {
        assert.deepEqual(s.connection.peers.map((p) => p.path), ['direct']);
        const p = s.connection.peers[0];
        // The channel opened before the start: nothing went by relay.
        assert.equal(p.sentRelay, 0, JSON.stringify(p));
        assert.ok(p.sentDirect > MATCH_S * TICK_HZ * 0.5, JSON.stringify(p));
      }
      const shown = await a.page.locator('#members tr[data-slot="1"]').getAttribute('data-path');
      assert.equal(shown, 'direct');
      const serverCpu = { cpuMs: serverCpuMs() - cpu0, wallMs: Date.now() - t0 };
      report.direct = { seconds: MATCH_S, serverCpu, ...(await checkMatch(a, b, start, end, MATCH_S)) };
    } finally {
      await a.close();
      await b.close();
    }
  });

  named(`the same over the forced relay (?relay=1), ${MATCH_S} s`, async () => {
    const { a, b } = await twoTabs({ seconds: MATCH_S, relay: true });
    try {
      await startMatch([a, b]);
      const cpu0 = serverCpuMs();
      const t0 = Date.now();
      const start = await state(a);
      await playScript(a, b, MATCH_S);
      const end = await finish([a, b], MATCH_S);
      for (const s of end) {
        assert.equal(s.connection.relayOnly, true);
        const p = s.connection.peers[0];
        assert.equal(p.path, 'relay');
        assert.equal(p.sentDirect, 0);
        assert.ok(p.sentRelay > MATCH_S * TICK_HZ * 0.5, JSON.stringify(p));
      }
      for (const t of [a, b]) {
        const other = (await state(t)).slot === 0 ? 1 : 0;
        const shown = await t.page.locator(`#members tr[data-slot="${other}"]`).getAttribute('data-path');
        assert.equal(shown, 'relay', 'the page does not show relay');
      }
      // The relay's cost: the server's CPU time over the match, one room.
      const serverCpu = { cpuMs: serverCpuMs() - cpu0, wallMs: Date.now() - t0 };
      report.relay = { seconds: MATCH_S, serverCpu, ...(await checkMatch(a, b, start, end, MATCH_S)) };
    } finally {
      await a.close();
      await b.close();
    }
  });

  named(`a mixed room: one tab and one native tickwise peer --room, ${SHORT_S} s`, async () => {
    const a = await tab('');
    let native = null;
    try {
      const code = await createRoom(a, { players: 2, ticks: SHORT_S * TICK_HZ });
      await until('welcome', async () => (await state(a)).lobby.slot === 0);
      const out = path.join(ctx.tmp, 'native.twr');
      native = spawn(ctx.bin, ['peer', '--room', `ws://127.0.0.1:${PORT}/v1/rooms/${code}`, '--player', '1',
        '--inputs', 'random:5', '--out', out, '--timeout-s', String(SHORT_S + 60), '--json'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      native.stdout.on('data', (d) => { stdout += d; });
      const exited = new Promise((r) => native.on('exit', (c) => r(c)));
      await until('the native peer in the lobby', async () => (await state(a)).lobby.members.length === 2);
      await startMatch([a]);
      await hold(a, 'ArrowRight', 1500);
      const [sa] = await finish([a], SHORT_S);
      const code2 = await exited;
      assert.equal(code2, 0, `tickwise peer --room exited ${code2}: ${stdout}`);
      const n = JSON.parse(stdout);
      assert.equal(sa.desyncs, 0, JSON.stringify(sa));
      assert.equal(sa.confirmedTick, SHORT_S * TICK_HZ);
      assert.equal(sa.connection.peers[0].path, 'relay', 'a native peer has no data channel');
      assert.equal(n.desyncs ?? n.stats?.desyncs ?? 0, 0, stdout);
      const nativeSum = JSON.stringify(n).match(/[0-9a-f]{16}/g) || [];
      assert.ok(nativeSum.includes(sa.confirmedChecksum), `the native peer's report does not have ${sa.confirmedChecksum}: ${stdout}`);
      const tabReplay = await a.page.evaluate(() => window.__tickwiseNet.replay());
      verify(tabReplay, 'mixed-tab.twr');
      report.mixed = { seconds: SHORT_S, traffic: traffic(sa), inputToRemoteApplyTicks: lagMean(sa) };
    } finally {
      if (native && native.exitCode === null) native.kill();
      await a.close();
    }
  });

  named('a tab frozen under disconnectAfter catches up; frozen longer, it rejoins through the room', async () => {
    // disconnectAfter 90 ticks = 3 s at 30 Hz; the tab is frozen 1 s, then 6 s.
    const { a, b } = await twoTabs({ seconds: SHORT_S, disconnectAfter: 90 });
    try {
      await startMatch([a, b]);
      await sleep(2000);
      // Frozen for 1 s (30 ticks, well under disconnectAfter): A stalls once it
      // is the window ahead, B catches up on return; nobody leaves.
      const stalls0 = (await state(a)).stalls;
      await freeze(b, 1000);
      await sleep(1500);
      const short = await state(a);
      assert.ok(short.stalls > stalls0, `A never stalled for B: ${short.stalls}`);
      assert.deepEqual(short.departed, [null, null]);
      const sb1 = await state(b);
      assert.equal(sb1.lobby.rejoins, 0, 'B rejoined after a short freeze');
      assert.equal(sb1.phase, 'playing');
      // Headless Chromium's pages are always visible here, and CDP's
      // Page.setWebLifecycleState does not freeze a visible page; the CDP
      // debugger does: paused, the page's main thread runs no
      // requestAnimationFrame, timer or event handler (a frozen tab).
      const cdp = await b.context.newCDPSession(b.page);
      await cdp.send('Debugger.enable');
      await cdp.send('Debugger.pause');
      const frozenAt = (await state(a)).currentTick;
      await sleep(6000);
      // Meanwhile A went on alone and agreed that B left.
      const mid = await state(a);
      assert.ok(mid.departed[1] !== null, `A did not declare B gone: ${JSON.stringify({ ...mid, heroes: undefined })}`);
      assert.ok(mid.currentTick > frozenAt + 90, 'A stopped while B was frozen');
      await cdp.send('Debugger.resume');
      await cdp.send('Debugger.disable');
      await until('B rejoined', async () => {
        const s = await state(b);
        return s.lobby.rejoins === 1 && s.phase === 'playing';
      }, 20_000);
      await hold(b, 'ArrowDown', 500);
      const [sa, sb] = await finish([a, b], SHORT_S);
      for (const s of [sa, sb]) {
        assert.equal(s.desyncs, 0, JSON.stringify(s));
        assert.equal(s.confirmedTick, SHORT_S * TICK_HZ);
      }
      assert.equal(sa.confirmedChecksum, sb.confirmedChecksum);
      assert.equal(sb.rejoined, true);
      verify(await a.page.evaluate(() => window.__tickwiseNet.replay()), 'hidden-a.twr');
      report.hidden = { shortFreeze: { ms: 1000, stallsOfA: short.stalls - stalls0 }, frozenMs: 6000, rejoinTicks: sb.rejoinTicks, departedAt: mid.departed[1] };
    } finally {
      await a.close();
      await b.close();
    }
  });
});
