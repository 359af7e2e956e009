// The duel page: the JS a game writes for its own sim. The class comes from
// `wasm_page!` in examples/duel-web/src/lib.rs; the real-time loop, the
// platform adapter and the shared test API from webloop.js.
//
// window.__tickwiseDuel: webloop.js's API (stepFrames, advance, pauseNow,
// resumeAfter, state, reset, setRealtime, setSpeed, replay, downloadReplay, ...)
// plus key(code, down, ms) -> bool, frameAt(ms) -> ticks, drawn() -> [ballX,
// ballY, leftY, rightY], pause(), resume().
import init, { Duel } from './pkg/duel_page.js';
import { attachLoop } from './webloop.js';
import { start } from './start.js';

start(async () => {
  await init();
  const duel = new Duel();
  const info = JSON.parse(duel.drawInfo());
  const $ = (id) => document.getElementById(id);
  const cv = $('field');
  const g = cv.getContext('2d');
  let status = 'ready';
  function draw() {
    const [bx, by, ly, ry] = duel.drawn();
    const sx = cv.width / info.width;
    const sy = cv.height / info.height;
    g.fillStyle = '#0f172a';
    g.fillRect(0, 0, cv.width, cv.height);
    g.fillStyle = '#1e293b';
    g.fillRect(cv.width / 2 - 1, 0, 2, cv.height);
    g.fillStyle = '#38bdf8';
    const ph = info.paddleHalf * sy;
    g.fillRect(info.paddleInset * sx - 6, ly * sy - ph, 6, 2 * ph);
    g.fillStyle = '#f97316';
    g.fillRect((info.width - info.paddleInset) * sx, ry * sy - ph, 6, 2 * ph);
    g.fillStyle = '#e2e8f0';
    g.beginPath();
    g.arc(bx * sx, by * sy, 6, 0, Math.PI * 2);
    g.fill();
    const s = JSON.parse(duel.stateJson());
    $('score').textContent = `${s.score[0]} - ${s.score[1]}`;
    $('tick').textContent = String(s.tick);
    $('state').textContent = s.winner ? `${s.winner} wins` : s.state;
    $('pause').setAttribute('aria-pressed', String(s.state === 'paused'));
    $('status').textContent = status;
  }
  const api = attachLoop(duel, {
    draw,
    name: 'duel',
    onVisibility: (out, hidden) => {
      status = `${hidden ? 'hidden' : 'visible'} -> ${out.outcome}` +
        (out.resume ? ` (caught up ${out.resume.catchUpSteps} ticks, dropped ${out.resume.droppedMs} ms)` : '');
    },
  });
  addEventListener('keydown', (e) => {
    if (duel.key(e.code, true, e.timeStamp)) e.preventDefault();
  });
  addEventListener('keyup', (e) => {
    if (duel.key(e.code, false, e.timeStamp)) e.preventDefault();
  });
  addEventListener('blur', () => duel.releaseAll(performance.now()));
  const pause = () => {
    const ok = duel.pauseAt(performance.now());
    status = ok ? 'paused' : 'pause refused: not running';
    draw();
    return ok;
  };
  const resume = () => {
    const r = JSON.parse(duel.resumeAt(performance.now()));
    status = r && r.ok ? `resumed: caught up ${r.catchUpSteps} ticks, dropped ${r.droppedMs} ms` : 'resume refused';
    draw();
    return r;
  };
  $('pause').addEventListener('click', () => (JSON.parse(duel.stateJson()).state === 'paused' ? resume() : pause()));
  $('reset').addEventListener('click', () => { api.reset(); status = 'reset'; draw(); });
  $('download').addEventListener('click', () => { status = `saved ${api.downloadReplay()}`; draw(); });
  globalThis.__tickwiseDuel = {
    ...api,
    key: (code, down, ms) => duel.key(String(code), Boolean(down), ms),
    frameAt: (ms) => { const n = duel.frameAt(ms); draw(); return n; },
    drawn: () => Array.from(duel.drawn()),
    pause,
    resume,
  };
  api.setRealtime(!new URLSearchParams(location.search).has('manual'));
  document.documentElement.dataset.ready = 'true';
});
