// Glue for any page class written by `tickwise_web::wasm_page!`: the real-time
// loop (requestAnimationFrame -> frameAt), the platform adapter
// (visibilitychange -> visibility) and the test API every such page shares.
// A game's page calls `attachLoop(handle, { draw })` and gets back the API
// object to publish (e.g. as window.__tickwisePage).
//
// The API (numbers are checked in Rust: bad ones throw an Error naming them):
//   stepFrames(n, ms = one step) -> tick    advance(n) -> tick
//   pauseNow(), backgroundNow() -> bool     resumeAfter(ms) -> resume report
//   state() -> { state, tick, digest, wallMs, accumulator, frames,
//                backwardsFrames, rejectedTimes, lastResume, ..., realtime }
//   reset(), setRealtime(on), realtime() -> bool
//   setSpeed(p, q) -> bool                  sim time at p/q of browser time
//                                           (false for anything Speed::new refuses)
//   replay() -> base64 string               the session so far as a replay file
//   downloadReplay() -> file name           the same bytes as a download
//                                           (<name>-<tick>.twr)
// Every call draws. Resume reports have the keys of `tickwise script`'s
// resume-after line: ok, elapsedMs, wantedSteps, catchUpSteps, carriedMs,
// droppedMs, plus digest.
import { frameLoop, wireVisibility } from './platform.js';
import { downloadBase64 } from './replay.js';

/**
 * @param {object} handle an instance of a `wasm_page!` class
 * @param {{ draw?: () => void, onVisibility?: (out: object, hidden: boolean) => void,
 *           name?: string }} [hooks] `name` starts the replay's file name
 */
export function attachLoop(handle, { draw = () => {}, onVisibility = () => {}, name = 'replay' } = {}) {
  const loop = frameLoop((ms) => {
    handle.frameAt(ms);
    draw();
  });
  function setRealtime(on) {
    if (on && !loop.running) {
      handle.reanchor(); // time spent in manual mode is not one huge first frame
      loop.start();
    } else if (!on) {
      loop.stop();
    }
    draw();
  }
  wireVisibility(document, (hidden, ms) => {
    onVisibility(JSON.parse(handle.visibility(hidden, ms)), hidden);
    draw();
  });
  const drawn = (f) => (...args) => {
    const out = f(...args);
    draw();
    return out;
  };
  return {
    stepFrames: drawn((n, ms) => handle.stepFrames(n, ms)),
    advance: drawn((n) => handle.advance(n)),
    pauseNow: drawn(() => handle.pauseNow()),
    backgroundNow: drawn(() => handle.backgroundNow()),
    resumeAfter: drawn((ms) => JSON.parse(handle.resumeAfter(ms))),
    reset: drawn(() => handle.reset()),
    state: () => ({ ...JSON.parse(handle.stateJson()), realtime: loop.running }),
    setRealtime: (on) => setRealtime(Boolean(on)),
    realtime: () => loop.running,
    setSpeed: drawn((p, q) => handle.setSpeed(Number(p), Number(q))),
    replay: () => handle.replay(),
    downloadReplay: () => downloadBase64(handle.replay(), `${name}-${handle.tick()}.twr`),
  };
}
