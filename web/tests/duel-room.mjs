// Browser tests for the duel's room page (web/dist/duel-room: the shared lobby
// room.js with the duel's RoomMatch class from examples/duel-web): two headless
// Chromium processes in one room of the duel's OWN `duel serve` (its
// tickwise_cli::main_with binary, which hosts rooms for the duel), over WebRTC
// data channels or the relay. Run inside the test's own network namespace,
// like the horde's room tests (web/tests/room.mjs):
//
//   bash .ci/build-web.sh
//   bash web/tests/netns.sh node --test web/tests/duel-room.mjs
//
// Environment:
//   TICKWISE_DUEL_BIN           the duel tool binary (default: `cargo build --release
//                               -p tickwise-example-duel --features cli --bin duel`)
//   TICKWISE_WEB_DIST           the built pages (default web/dist)
//   TICKWISE_DUEL_ROOM_SECONDS  the direct match's length (default 20 s; the relay
//                               match is 10 s)
//
// Writes its figures to out/duel-room-report.json.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, cargoBin, hold, openTab, roomServer, sleep, state, until, verifyReplay } from './room-helpers.mjs';

const DIST = path.resolve(process.env.TICKWISE_WEB_DIST || path.join(ROOT, 'web/dist'), 'duel-room');
const PORT = 18081; // inside the test's own namespace
// The duel's default config: "stepMs": 16, so 62.5 ticks a second.
const TICK_HZ = 1000 / 16;
const MATCH_S = Number(process.env.TICKWISE_DUEL_ROOM_SECONDS || 20);
const RELAY_S = 10;

const report = {};

const ctx = roomServer({
  label: 'duel',
  testFile: 'web/tests/duel-room.mjs',
  dist: DIST,
  files: ['room.html', 'room.js', 'room-main.js', 'pkg/duel_page_bg.wasm'],
  port: PORT,
  bin: () => cargoBin(process.env.TICKWISE_DUEL_BIN, ['-p', 'tickwise-example-duel', '--features', 'cli', '--bin', 'duel'], 'duel'),
  tmpPrefix: 'tickwise-duel-room-',
  reportName: 'duel-room-report.json',
  report,
});

const tab = (query) => openTab(ctx, query);

/** Both tabs' paddles once nobody presses: equal on both (a settled prediction is the confirmed state). */
async function settledPaddles(a, b) {
  await sleep(800);
  const [pa, pb] = [(await state(a)).paddles, (await state(b)).paddles];
  assert.deepEqual(pa, pb, 'the tabs disagree on the paddles after 800 ms without a key');
  return pa;
}

function verify(b64, name) {
  const out = verifyReplay(ctx, b64, name);
  assert.match(out, new RegExp(`^OK\\s+.*${name}`, 'm'), out);
  return out;
}

/**
 * Two tabs play one duel room for `seconds`: the title says which sim the
 * page created the room for, each tab presses only its own keys, and each
 * paddle moves only by its own tab.
 */
async function duelMatch(seconds, relay) {
  const q = relay ? '?relay=1' : '';
  const a = await tab(q);
  let b = null;
  try {
    const ticks = Math.round(seconds * TICK_HZ);
    const code = await a.page.evaluate((o) => window.__tickwiseNet.create(o), { players: 2, ticks });
    b = await tab(`?room=${code}${relay ? '&relay=1' : ''}`);
    for (const t of [a, b]) await until('welcome', async () => (await state(t)).lobby.slot !== null);
    if (!relay) {
      for (const t of [a, b]) {
        await until('an open data channel', async () => (await state(t)).lobby.members.some((m) => m.channel));
      }
    }
    for (const t of [a, b]) await t.page.evaluate(() => window.__tickwiseNet.ready());
    for (const t of [a, b]) await until('the match', async () => (await state(t)).phase === 'playing');
    const [sa0, sb0] = [await state(a), await state(b)];
    assert.deepEqual([sa0.slot, sb0.slot, sa0.sim], [0, 1, 'duel']);
    const p0 = await settledPaddles(a, b);
    // The duel's own part of the page draws: paddles, ball and the centre
    // line over the field's background (#0f172a).
    const painted = await a.page.evaluate(() => {
      const c = document.getElementById('view');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i] !== 0x0f || d[i + 1] !== 0x17 || d[i + 2] !== 0x2a) n += 1;
      return n;
    });
    assert.ok(painted > 300, `the duel room canvas painted ${painted} px`);
    mkdirSync(path.join(ROOT, 'out'), { recursive: true });
    await a.page.screenshot({ path: path.join(ROOT, `out/duel-room-${relay ? 'relay' : 'direct'}.png`) });
    // Tab A alone (its W): the left paddle goes up, the right one stays.
    await hold(a, 'KeyW', 500);
    const p1 = await settledPaddles(a, b);
    assert.ok(p1[0] < p0[0], `A's W did not move the left paddle up: ${p0} -> ${p1}`);
    assert.equal(p1[1], p0[1], `A's key moved the right paddle: ${p0} -> ${p1}`);
    // Tab B alone, with the key that is the LEFT paddle's on the
    // single-player page (S): in a room it moves B's own paddle, the right.
    await hold(b, 'KeyS', 500);
    const p2 = await settledPaddles(a, b);
    assert.ok(p2[1] > p1[1], `B's S did not move the right paddle down: ${p1} -> ${p2}`);
    assert.equal(p2[0], p1[0], `B's key moved the left paddle: ${p1} -> ${p2}`);
    // Both at once, opposite ways, each with the other side's arrow keys.
    await Promise.all([hold(a, 'ArrowDown', 400), hold(b, 'ArrowUp', 400)]);
    const p3 = await settledPaddles(a, b);
    assert.ok(p3[0] > p2[0] && p3[1] < p2[1], `each paddle did not follow its own tab: ${p2} -> ${p3}`);
    for (const t of [a, b]) {
      await until('the end of the match', async () => (await state(t)).finished, (seconds + 30) * 1000, 250);
    }
    const [sa, sb] = [await state(a), await state(b)];
    for (const s of [sa, sb]) {
      assert.equal(s.desyncs, 0, JSON.stringify(s));
      assert.equal(s.confirmedTick, ticks);
      const p = s.connection.peers[0];
      assert.equal(p.path, relay ? 'relay' : 'direct', JSON.stringify(p));
      if (relay) assert.equal(p.sentDirect, 0, JSON.stringify(p));
      else assert.equal(p.sentRelay, 0, JSON.stringify(p));
    }
    assert.equal(sa.confirmedChecksum, sb.confirmedChecksum);
    assert.deepEqual(sa.paddles, sb.paddles);
    assert.deepEqual(sa.score, sb.score);
    // Both replays: the same bytes, and each verifies with the duel's own tool.
    const [ra, rb] = await Promise.all([a, b].map((t) => t.page.evaluate(() => window.__tickwiseNet.replay())));
    assert.equal(ra, rb, 'the two tabs recorded different replays');
    const out = verify(ra, `duel-${relay ? 'relay' : 'direct'}-a.twr`);
    verify(rb, `duel-${relay ? 'relay' : 'direct'}-b.twr`);
    assert.match(out, new RegExp(`\\(${ticks} ticks`), out);
    assert.match(out, new RegExp(`chk=${sa.confirmedChecksum}\\)`), 'verify does not end on the confirmed checksum');
    const shown = await a.page.locator('#members tr[data-slot="1"]').getAttribute('data-path');
    assert.equal(shown, relay ? 'relay' : 'direct');
    return {
      seconds,
      ticks,
      checksum: sa.confirmedChecksum,
      paddles: { start: p0, afterA: p1, afterB: p2, afterBoth: p3, end: sa.paddles },
      score: sa.score,
      inputToRemoteApplyTicks: +(sa.inputDelay + sa.lag.sum / sa.lag.samples).toFixed(2),
      rollbacks: [sa.rollbacks, sb.rollbacks],
      verify: out.trim().split('\n')[0],
    };
  } finally {
    await a.close();
    if (b) await b.close();
  }
}

describe('duel room page (the duel\'s own serve)', { concurrency: false }, () => {
  test(`two Chromium processes, one duel room, direct data channels, ${MATCH_S} s`, async () => {
    report.direct = await duelMatch(MATCH_S, false);
  });

  test(`the same over the forced relay (?relay=1), ${RELAY_S} s`, async () => {
    report.relay = await duelMatch(RELAY_S, true);
  });
});
