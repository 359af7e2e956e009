// The horde page: the horde sim at its fixed tick rate (30 Hz), drawn at the
// display rate with interpolation between the previous and the current tick.
// All simulation, timing and input assignment is Rust (the `Horde` class);
// this file draws, forwards events, and exposes the test API.
//
// window.__tickwiseHorde
//   frameAt(ms) -> ticks run          one display frame at browser time ms
//   key(code, down, ms) -> bool       a KeyboardEvent.code at time ms (arrows / WASD)
//   state() -> { tick, digest, alpha, fps, tickRate, alive, kills, ... }
//   reset(), setRealtime(on), realtime() -> bool
//   pause(), resume() -> bool / resume report   a player's pause at performance.now()
//                                     (resume catches up under the capped policy)
//   setSpeed(p, q) -> bool            sim time at p/q of real time (false for bad numbers)
//   replay() -> base64                the session since load or reset as a replay file
//   downloadReplay() -> file name     the same bytes as horde-<tick>.twr (the button)
//   advance(n) -> tick                n ticks at once, no frames (benchmarks)
//   stopRecording()                   (benchmarks; reset() records again)
// Real-time mode (default; ?manual turns it off) feeds requestAnimationFrame
// timestamps; keyboard events carry their own event.timeStamp (same clock).
import init, { Horde } from './pkg/tickwise_web.js';
import { frameLoop, wireKeys, wireVisibility } from './platform.js';
import { rateMeter, throttledReadout } from './meter.js';
import { downloadBase64 } from './replay.js';
import { drawHordeView } from './horde-view.js';

export async function boot() {
  await init();
  const params = new URLSearchParams(location.search);
  // ?enemies=N and ?separationTicks=N change the built-in config (both end up
  // in the recorded replay's config bytes).
  const num = (key) => (params.has(key) ? Number(params.get(key)) : undefined);
  const horde = Horde.withOptions(num('enemies'), num('separationTicks'));
  const info = JSON.parse(horde.drawInfo());
  const $ = (id) => document.getElementById(id);
  const g = $('field').getContext('2d');
  const meter = rateMeter(1000);
  let paintCount = 0;
  let status = 'ready';

  const snapshot = () => JSON.parse(horde.stateJson());

  function draw() {
    drawHordeView(g, horde.interpolated(), info, ['#e0f2fe']);
    paintCount += 1;
  }

  function readout() {
    const s = snapshot();
    const { fps, tickRate } = meter.rates();
    $('fps').textContent = fps === null ? '-' : fps.toFixed(1);
    $('tickrate').textContent = tickRate === null ? '-' : tickRate.toFixed(1);
    $('alpha').textContent = s.alpha.toFixed(2);
    $('tick').textContent = String(s.tick);
    $('alive').textContent = `${s.alive} / ${s.kills}`;
    $('hp').textContent = String(s.playerHp);
    $('state').textContent = s.state;
    $('status').textContent = status;
    $('realtime').setAttribute('aria-pressed', String(loop.running));
    $('pause').setAttribute('aria-pressed', String(s.state === 'paused'));
    return s;
  }

  // Text readouts four times a second.
  const maybeReadout = throttledReadout(250, readout);
  function frame(ms) {
    const steps = horde.frameAt(ms);
    meter.frame(ms, horde.tick());
    draw();
    maybeReadout(ms);
    return steps;
  }

  const loop = frameLoop(frame);
  function setRealtime(on) {
    if (on && !loop.running) {
      horde.reanchor();
      meter.clear();
      loop.start();
    } else if (!on) {
      loop.stop();
    }
    readout();
  }

  // Key repeats are harmless (the input buffer ignores a down for a held key).
  wireKeys(globalThis, horde);
  wireVisibility(document, (hidden, ms) => {
    if (hidden) horde.releaseAll(ms);
    const out = JSON.parse(horde.visibility(hidden, ms));
    status = `visibilitychange: ${hidden ? 'hidden' : 'visible'} -> ${out.outcome}` +
      (out.resume ? ` (away ${out.resume.elapsedMs} ms: caught up ${out.resume.catchUpSteps} ticks, dropped ${out.resume.droppedMs} ms)` : '');
    meter.clear();
    readout();
  });
  $('realtime').addEventListener('click', () => setRealtime(!loop.running));
  $('reset').addEventListener('click', () => api.reset());
  $('pause').addEventListener('click', () => {
    if (snapshot().state === 'paused') api.resume();
    else api.pause();
  });
  $('download').addEventListener('click', () => api.downloadReplay());

  const api = {
    frameAt: (ms) => frame(ms),
    key: (code, down, ms) => horde.key(String(code), Boolean(down), ms),
    state: () => ({ ...snapshot(), ...meter.rates(), paintCount, realtime: loop.running }),
    reset: () => {
      horde.reset();
      meter.clear();
      status = 'reset';
      draw();
      readout();
    },
    setRealtime: (on) => setRealtime(Boolean(on)),
    realtime: () => loop.running,
    pause: () => {
      const ok = horde.pauseAt(performance.now());
      status = ok ? 'paused' : 'pause refused: not running';
      readout();
      return ok;
    },
    resume: () => {
      const r = JSON.parse(horde.resumeAt(performance.now()));
      status = r && r.ok
        ? `resumed after ${r.elapsedMs} ms: caught up ${r.catchUpSteps} ticks, dropped ${r.droppedMs} ms`
        : 'resume refused: not paused';
      meter.clear();
      draw();
      readout();
      return r;
    },
    setSpeed: (p, q) => {
      const ok = horde.setSpeed(Number(p), Number(q));
      meter.clear();
      readout();
      return ok;
    },
    replay: () => horde.replay(),
    advance: (n) => {
      const tick = horde.advance(n);
      draw();
      readout();
      return tick;
    },
    stopRecording: () => horde.stopRecording(),
    downloadReplay: () => {
      const name = downloadBase64(horde.replay(), `horde-${horde.tick()}.twr`);
      status = `saved ${name}`;
      readout();
      return name;
    },
  };
  globalThis.__tickwiseHorde = api;
  draw();
  setRealtime(!params.has('manual'));
  document.documentElement.dataset.ready = 'true';
  return api;
}
