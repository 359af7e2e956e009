// The counter page: the JS a game writes for its own sim. The class comes
// from `wasm_page!` (crates/tickwise-web/examples/counter_page.rs); the loop,
// the platform adapter and the test API from webloop.js.
import init, { Counter } from './pkg/counter_page.js';
import { attachLoop } from './webloop.js';
import { start } from './start.js';

start(async () => {
  await init();
  const counter = new Counter();
  const $ = (id) => document.getElementById(id);
  const g = $('bar').getContext('2d');
  function draw() {
    const s = JSON.parse(counter.stateJson());
    g.fillStyle = '#0f172a';
    g.fillRect(0, 0, 600, 40);
    g.fillStyle = '#38bdf8';
    g.fillRect(0, 8, (s.total % 600) + 1, 24);
    $('tick').textContent = String(s.tick);
    $('total').textContent = String(s.total);
    $('state').textContent = s.state;
  }
  const api = attachLoop(counter, {
    draw,
    onVisibility: (out, hidden) => {
      $('status').textContent = `${hidden ? 'hidden' : 'visible'} -> ${out.outcome}`;
    },
  });
  globalThis.__tickwisePage = api;
  api.setRealtime(!new URLSearchParams(location.search).has('manual'));
  document.documentElement.dataset.ready = 'true';
});
