// The netplay page: two peers of one rollback session (tickwise-net) side by
// side, over the seeded network simulator, each driven by this page's frame
// clock through its own FixedLoop. The sim is the co-op horde with two
// heroes: hero 1 (player 1, the keyboard) and hero 2 (player 2, a seeded
// bot), both drawn in both views; each view's camera follows its own hero. All simulation, networking and timing is
// Rust (the `Netplay` class); this file draws, forwards events and sliders,
// and exposes the test API.
//
// Player 1 is this tab's own peer: hidden (visibilitychange, or the page
// frozen: freeze/resume), it stops. Player 2 stands in for a peer on another
// machine and runs on the page's clock whatever the tab does; back from a
// hide longer than `disconnectAfter` ticks (URL ?disconnectAfter=N, default
// 300 = 10 s), player 1 finds itself declared gone and rejoins
// (docs/browser.md, "Hidden tab: leave and rejoin").
//
// window.__tickwiseNet
//   frameAt(ms) -> ticks run            one display frame at browser time ms
//   stepFrames(n, ms) -> tick           n frames of ms, no real time (test API)
//   key(code, down, ms) -> bool         player 1's key (arrows / WASD) at time ms
//   setRtt(ms), setLoss(pct), setInputDelay(ticks)   the sliders (whole numbers;
//                                       bad ones throw an Error naming them)
//   endMatch() -> tick                  both sessions stop at this tick and confirm it
//   state() -> { rttMs, lossPct, inputDelay, window, frames, networkMs,
//                hidden, leaves, rejoins, rejoining: null | { phase, ticks, ... },
//                rejoinError, disconnectAfter,
//                peers: [{ confirmedTick, confirmedChecksum, rollbacks,
//                          mispredictions, stalls, desyncs, packetsSent,
//                          packetsLost, finished, heroes: [{ x, y, hp }, ...],
//                          ... }, ...], realtime, paintCount }
//                                       heroes: every hero of that view's current
//                                       state, by player (x, y in 1/256 px)
//   interpolated(p) -> number[]         view p's drawing positions in px: [n, hero0X, hero0Y,
//                                       hero1X, hero1Y, enemy x, y, …] (n heroes, then enemies)
//   replay(p) -> base64                 player p's replay of the confirmed inputs
//                                       (what `tickwise netplay --out` writes); no p:
//                                       the match's (player 1's, or player 2's once
//                                       player 1 rejoined: a rejoined peer records nothing)
//   downloadReplay() -> file name       the match's replay as netplay-<tick>.twr
//   reset(), setRealtime(on), realtime() -> bool
//   benchSimSteps(n)                    n bare sim steps (to time the sim alone)
import init, { Netplay } from './pkg/tickwise_web.js';
import { frameLoop, wireKeys, wireVisibility } from './platform.js';
import { throttledReadout } from './meter.js';
import { downloadBase64 } from './replay.js';
import { drawHordeView } from './horde-view.js';

const PLAYER_COLORS = ['#e0f2fe', '#fde68a'];
const ROWS = [
  ['confirmed tick', (p) => p.confirmedTick],
  ['confirmed checksum', (p) => p.confirmedChecksum ?? '-'],
  ['current tick', (p) => p.currentTick],
  ['rollbacks', (p) => p.rollbacks],
  ['max rollback', (p) => p.maxRollback],
  ['prediction misses', (p) => p.mispredictions],
  ['re-simulated ticks', (p) => p.resimulated],
  ['stalls', (p) => p.stalls],
  ['sync waits', (p) => p.syncWaits],
  ['packets sent / lost', (p) => `${p.packetsSent} / ${p.packetsLost}`],
  ['packets dropped (bad)', (p) => p.packetsDropped],
  ['of which unauthenticated', (p) => p.packetsUnauthenticated],
  ['checks compared', (p) => p.checksCompared],
  ['desyncs', (p) => p.desyncs],
  ['input delay', (p) => p.inputDelay],
  ['rtt (ticks)', (p) => p.rttTicks],
];

export async function boot() {
  await init();
  const params = new URLSearchParams(location.search);
  const net = new Netplay();
  if (params.has('disconnectAfter')) net.setDisconnectAfter(Number(params.get('disconnectAfter')));
  const info = JSON.parse(net.drawInfo());
  const $ = (id) => document.getElementById(id);
  const canvases = [$('view0'), $('view1')];
  let paintCount = 0;
  let status = 'ready';

  const body = $('counters');
  const cells = ROWS.map(([label]) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.textContent = label;
    tr.appendChild(th);
    const tds = [0, 1].map(() => tr.appendChild(document.createElement('td')));
    body.appendChild(tr);
    return tds;
  });

  const snapshot = () => JSON.parse(net.stateJson());

  function draw() {
    canvases.forEach((cv, p) => drawHordeView(cv.getContext('2d'), net.interpolated(p), info, PLAYER_COLORS, p));
    paintCount += 1;
  }

  function showSliders(s) {
    $('rtt').value = String(s.rttMs);
    $('loss').value = String(s.lossPct);
    $('delay').value = String(s.inputDelay);
    $('rtt-v').textContent = String(s.rttMs);
    $('loss-v').textContent = String(s.lossPct);
    $('delay-v').textContent = String(s.inputDelay);
  }

  function readout() {
    const s = snapshot();
    ROWS.forEach(([, f], i) => s.peers.forEach((p, k) => { cells[i][k].textContent = String(f(p)); }));
    showSliders(s);
    const end = s.peers.find((p) => p.ended || p.desync);
    const away = s.rejoining
      ? `player 1 was declared gone and rejoins (${s.rejoining.phase}) — `
      : s.rejoinError ? `rejoin failed: ${s.rejoinError} — ` : '';
    const counts = s.leaves ? ` (player 1 left ${s.leaves}×, rejoined ${s.rejoins}×)` : '';
    $('status').textContent = `${away}${end ? `${end.ended || end.desync}` : status}${counts}`;
    $('realtime').setAttribute('aria-pressed', String(loop.running));
    return s;
  }

  const maybeReadout = throttledReadout(250, readout);
  function frame(ms) {
    const steps = net.frameAt(ms);
    draw();
    maybeReadout(ms);
    return steps;
  }

  const loop = frameLoop(frame);
  function setRealtime(on) {
    if (on && !loop.running) {
      net.reanchor();
      loop.start();
    } else if (!on) {
      loop.stop();
    }
    readout();
  }

  wireKeys(globalThis, net);
  // Hidden, player 1 (this tab's peer) stops; player 2 (the "remote") plays
  // on its own clock, caught up in wall-clock time when frames come again.
  // Visible again, player 1 goes on, or rejoins if player 2 declared it gone.
  const away = (hidden, ms, why) => {
    if (hidden) net.hide(ms);
    else net.show(ms);
    status = `${why}: ${hidden ? 'hidden (player 1 stops, player 2 plays on)' : 'visible (player 1 is back)'}`;
    readout();
  };
  wireVisibility(document, (hidden, ms) => away(hidden, ms, 'visibilitychange'));
  document.addEventListener('freeze', () => away(true, performance.now(), 'freeze'));
  document.addEventListener('resume', () => away(false, performance.now(), 'resume'));

  const setting = (f) => (v) => {
    f(Number(v));
    readout();
  };
  const api = {
    frameAt: (ms) => frame(ms),
    stepFrames: (n, ms) => {
      const t = net.stepFrames(n, ms);
      draw();
      readout();
      return t;
    },
    key: (code, down, ms) => net.key(String(code), Boolean(down), ms),
    setRtt: setting((v) => net.setRtt(v)),
    setLoss: setting((v) => net.setLoss(v)),
    setInputDelay: setting((v) => net.setInputDelay(v)),
    endMatch: () => {
      const t = net.endMatch();
      status = `match ends at tick ${t}: both peers confirm it, then stop`;
      readout();
      return t;
    },
    state: () => ({ ...snapshot(), realtime: loop.running, paintCount }),
    interpolated: (p) => Array.from(net.interpolated(p)),
    replay: (p) => net.replay(p),
    downloadReplay: () => {
      const s = snapshot();
      const name = downloadBase64(net.replay(), `netplay-${s.peers[1].confirmedTick}.twr`);
      status = `saved ${name}`;
      readout();
      return name;
    },
    reset: () => {
      net.reset();
      status = 'reset';
      draw();
      readout();
    },
    setRealtime: (on) => setRealtime(Boolean(on)),
    realtime: () => loop.running,
    benchSimSteps: (n) => net.benchSimSteps(n),
  };
  for (const [id, f] of [['rtt', api.setRtt], ['loss', api.setLoss], ['delay', api.setInputDelay]]) {
    $(id).addEventListener('input', (e) => f(e.target.value));
  }
  $('realtime').addEventListener('click', () => setRealtime(!loop.running));
  $('end').addEventListener('click', () => api.endMatch());
  $('reset').addEventListener('click', () => api.reset());
  $('download').addEventListener('click', () => api.downloadReplay());

  globalThis.__tickwiseNet = api;
  draw();
  setRealtime(!params.has('manual'));
  document.documentElement.dataset.ready = 'true';
  return api;
}
