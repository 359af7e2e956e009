// The netplay page: two peers of one rollback session (tickwise-net) side by
// side, over the seeded network simulator, each driven by this page's frame
// clock through its own FixedLoop. All simulation, networking and timing is
// Rust (the `Netplay` class); this file draws, forwards events and sliders,
// and exposes the test API.
//
// window.__tickwiseNet
//   frameAt(ms) -> ticks run            one display frame at browser time ms
//   stepFrames(n, ms) -> tick           n frames of ms, no real time (test API)
//   key(code, down, ms) -> bool         player 1's key (arrows / WASD) at time ms
//   setRtt(ms), setLoss(pct), setInputDelay(ticks)   the sliders (whole numbers;
//                                       bad ones throw an Error naming them)
//   endMatch() -> tick                  both sessions stop at this tick and confirm it
//   state() -> { rttMs, lossPct, inputDelay, window, frames, networkMs,
//                peers: [{ confirmedTick, confirmedChecksum, rollbacks,
//                          mispredictions, stalls, desyncs, packetsSent,
//                          packetsLost, finished, ... }, ...], realtime, paintCount }
//   replay(p = 0) -> base64             player p's replay of the confirmed inputs
//                                       (what `tickwise netplay --out` writes)
//   downloadReplay() -> file name       the same bytes as netplay-<tick>.twr
//   reset(), setRealtime(on), realtime() -> bool
//   benchSimSteps(n)                    n bare sim steps (to time the sim alone)
import init, { Netplay } from './pkg/tickwise_web.js';
import { frameLoop, wireVisibility } from './platform.js';
import { downloadBase64 } from './replay.js';

const SCALE = 0.5; // screen px per field px
const BG = '#0f172a';
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
  ['checks compared', (p) => p.checksCompared],
  ['desyncs', (p) => p.desyncs],
  ['input delay', (p) => p.inputDelay],
  ['rtt (ticks)', (p) => p.rttTicks],
];

export async function boot() {
  await init();
  const params = new URLSearchParams(location.search);
  const net = new Netplay();
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

  function drawView(p) {
    const cv = canvases[p];
    const g = cv.getContext('2d');
    const pos = net.interpolated(p);
    const W = cv.width;
    const H = cv.height;
    const [camX, camY] = [pos[0], pos[1]];
    const sx = (x) => (x - camX) * SCALE + W / 2;
    const sy = (y) => (y - camY) * SCALE + H / 2;
    g.fillStyle = BG;
    g.fillRect(0, 0, W, H);
    g.fillStyle = '#1e293b';
    const step = 128;
    for (let x = Math.ceil((camX - W / SCALE / 2) / step) * step; sx(x) < W; x += step) g.fillRect(sx(x), 0, 1, H);
    for (let y = Math.ceil((camY - H / SCALE / 2) / step) * step; sy(y) < H; y += step) g.fillRect(0, sy(y), W, 1);
    g.strokeStyle = '#475569';
    g.strokeRect(sx(0), sy(0), info.fieldWidth * SCALE, info.fieldHeight * SCALE);
    const r = Math.max(1, info.enemyRadius * SCALE);
    g.fillStyle = '#f43f5e';
    for (let i = 2; i < pos.length; i += 2) {
      const x = sx(pos[i]);
      const y = sy(pos[i + 1]);
      if (x > -r && x < W + r && y > -r && y < H + r) g.fillRect(x - r, y - r, 2 * r, 2 * r);
    }
    g.strokeStyle = '#38bdf8';
    g.beginPath();
    g.arc(W / 2, H / 2, info.attackRadius * SCALE, 0, Math.PI * 2);
    g.stroke();
    g.fillStyle = p === 0 ? '#e0f2fe' : '#fde68a';
    g.beginPath();
    g.arc(W / 2, H / 2, Math.max(2, info.playerRadius * SCALE), 0, Math.PI * 2);
    g.fill();
  }

  function draw() {
    drawView(0);
    drawView(1);
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
    $('status').textContent = end ? `${end.ended || end.desync}` : status;
    $('realtime').setAttribute('aria-pressed', String(loop.running));
    return s;
  }

  let lastReadout = -Infinity;
  function frame(ms) {
    const steps = net.frameAt(ms);
    draw();
    if (!(ms - lastReadout < 250) || ms < lastReadout) {
      readout();
      lastReadout = ms;
    }
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

  addEventListener('keydown', (e) => {
    if (net.key(e.code, true, e.timeStamp)) e.preventDefault();
  });
  addEventListener('keyup', (e) => {
    if (net.key(e.code, false, e.timeStamp)) e.preventDefault();
  });
  addEventListener('blur', () => net.releaseAll(performance.now()));
  // Both peers live in this tab: hidden, they stop together; visible again,
  // the clock re-anchors, so the time away does not exist for either.
  wireVisibility(document, (hidden, ms) => {
    if (hidden) net.releaseAll(ms);
    else net.reanchor();
    status = `visibilitychange: ${hidden ? 'hidden (both peers stop)' : 'visible (both peers go on)'}`;
    readout();
  });

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
    replay: (p = 0) => net.replay(p),
    downloadReplay: () => {
      const s = snapshot();
      const name = downloadBase64(net.replay(0), `netplay-${s.peers[0].confirmedTick}.twr`);
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
