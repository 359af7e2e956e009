// The island prototype page: the resume rules' prototype controls over the tickwise kernel in
// WebAssembly. All simulation, lifecycle and scene logic is Rust (the `Island`
// class); this file draws, wires buttons, and exposes the test API.
//
// window.__tickwise (a contract: other tools drive the page with it)
//   stepFrames(n, ms = stepMs) -> tick      n frames of ms each
//   pauseNow(), backgroundNow() -> bool      false unless running
//   resumeAfter(ms) -> { ok, elapsedMs, wantedSteps, catchUpSteps, carriedMs, droppedMs, digest }
//   pushScene(name), popScene() -> bool
//   reset()
//   state() -> { state, scenes, digest, tick, accumulator, lastResume, paintCount, ... }
//   setSpeed(p, q) -> bool                   sim time at p/q of real time (the
//                                            selector: 1/4, 1/2, 1/1, 2/1, 4/1);
//                                            false, no throw, for what Speed::new refuses
//   replay() -> base64                       the session since load or reset as a
//                                            replay file (tickwise verify reads it)
//   downloadReplay() -> file name            the same bytes as island-<tick>.twr
//                                            (the "Download replay" button)
// and, beyond the contract: advance(n) -> tick, setRealtime(on), realtime() -> bool,
// stopRecording() (benchmarks; reset() records again).
// Bad numbers (NaN, negative, fractional, too large) throw an Error naming the
// argument and change nothing.
//
// Manual mode (default): time moves only through the API and the buttons, so a
// timeline is reproducible to the bit. Real-time mode (button, setRealtime(true)
// or ?realtime in the URL): each requestAnimationFrame timestamp is a frame.
// In both modes the platform adapter routes visibilitychange to the kernel's
// background / resume, so a tab hidden for an hour resumes with a capped
// catch-up and the report shows it.
import init, { Island } from './pkg/tickwise_web.js';
import { frameLoop, wireVisibility } from './platform.js';
import { SPEEDS, downloadBase64 } from './replay.js';

const BG = '#0f172a';
const COLORS = { running: '#38bdf8', paused: '#f97316', background: '#a3a3a3' };

export async function boot() {
  await init();
  const island = new Island();
  const $ = (id) => document.getElementById(id);
  const cv = $('board');
  const g = cv.getContext('2d');
  let paintCount = 0;
  let status = 'ready';

  const snapshot = () => JSON.parse(island.stateJson());

  function draw() {
    const s = snapshot();
    const [posX, , velX, , score, tick] = island.view();
    const W = cv.width;
    const H = cv.height;
    g.fillStyle = BG;
    g.fillRect(0, 0, W, H);
    g.fillStyle = '#1e293b';
    g.fillRect(0, H / 2 - 1, W, 2);
    // Score bar and tick ruler: something that visibly moves every step.
    g.fillStyle = '#334155';
    g.fillRect(0, H - 8, (score % W) + 1, 8);
    g.fillStyle = '#475569';
    for (let i = 0; i < 16; i += 1) g.fillRect(((tick + i * 45) % W), 6, 2, 10);
    const x = ((posX % W) + W) % W;
    const dy = Math.max(-H / 2 + 24, Math.min(H / 2 - 24, velX * 4));
    g.fillStyle = COLORS[s.state] ?? '#ffffff';
    g.beginPath();
    g.arc(x, H / 2 + dy, 12, 0, Math.PI * 2);
    g.fill();
    paintCount += 1;

    $('state').textContent = s.state;
    $('tick').textContent = String(s.tick);
    $('mode').textContent = loop.running ? 'real time' : 'manual';
    $('scenes').textContent = s.scenes === '' ? '(empty)' : s.scenes;
    const r = s.lastResume;
    $('catchup').textContent = r === null
      ? '-'
      : r.ok
        ? `${r.catchUpSteps} / ${r.droppedMs} ms  (away ${r.elapsedMs} ms, wanted ${r.wantedSteps}, carried ${r.carriedMs} ms)`
        : 'refused: already running';
    $('digest').textContent = s.digest;
    $('status').textContent = status;
    $('recorded').textContent = s.recording ? `${s.tick} ticks` : 'not recording';
    $('speed').value = s.speed.join('/');
    $('realtime').setAttribute('aria-pressed', String(loop.running));
  }

  const loop = frameLoop((ms) => {
    island.frameAt(ms);
    draw();
  });

  function setRealtime(on) {
    if (on && !loop.running) {
      island.reanchor(); // manual time is not one huge first frame
      loop.start();
    } else if (!on) {
      loop.stop();
    }
    draw();
  }

  // Every API call draws, like the prototype page it reproduces.
  const drawn = (f) => (...args) => {
    const out = f(...args);
    draw();
    return out;
  };
  const api = {
    stepFrames: drawn((n, ms) => island.stepFrames(n, ms)),
    advance: drawn((n) => island.advance(n)),
    pauseNow: drawn(() => island.pauseNow()),
    backgroundNow: drawn(() => island.backgroundNow()),
    resumeAfter: drawn((ms) => JSON.parse(island.resumeAfter(ms))),
    pushScene: drawn((name) => island.pushScene(String(name))),
    popScene: drawn(() => island.popScene()),
    reset: drawn(() => {
      island.reset();
      status = 'reset';
    }),
    state: () => ({ ...snapshot(), paintCount, realtime: loop.running }),
    setRealtime: (on) => setRealtime(Boolean(on)),
    realtime: () => loop.running,
    setSpeed: drawn((p, q) => island.setSpeed(Number(p), Number(q))),
    replay: () => island.replay(),
    downloadReplay: drawn(() => {
      const name = downloadBase64(island.replay(), `island-${island.tick()}.twr`);
      status = `saved ${name}`;
      return name;
    }),
    stopRecording: drawn(() => island.stopRecording()),
  };
  for (const [p, q, label] of SPEEDS) {
    const o = document.createElement('option');
    o.value = `${p}/${q}`;
    o.textContent = label;
    $('speed').append(o);
  }
  $('speed').addEventListener('change', (e) => {
    const [p, q] = e.target.value.split('/').map(Number);
    api.setSpeed(p, q);
  });

  wireVisibility(document, (hidden, ms) => {
    const out = JSON.parse(island.visibility(hidden, ms));
    status = `visibilitychange: ${hidden ? 'hidden' : 'visible'} -> ${out.outcome}`;
    draw();
  });

  const click = (id, f) => $(id).addEventListener('click', () => f());
  click('step', () => api.stepFrames(10));
  click('pause', () => api.pauseNow());
  click('resume', () => api.resumeAfter(5000));
  click('huge', () => api.resumeAfter(3600000));
  click('push', () => api.pushScene('popup'));
  click('pop', () => api.popScene());
  click('reset', () => api.reset());
  click('realtime', () => setRealtime(!loop.running));
  click('download', () => api.downloadReplay());

  globalThis.__tickwise = api;
  if (new URLSearchParams(location.search).has('realtime')) setRealtime(true);
  else draw();
  document.documentElement.dataset.ready = 'true';
  return api;
}
