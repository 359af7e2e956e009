// The page's wasm on node's V8 (the engine Chromium runs it on), timed by
// CPU time: an A/B tool for wasm builds, quicker than the browser test and
// as steady on a busy machine.
//
//   node web/tests/bench-node.mjs PKG_DIR [PKG_DIR...]
//
// PKG_DIR holds a `--target web` wasm-bindgen build of tickwise-web
// (`web/dist/pkg` after `bash .ci/build-web.sh`). Each directory is run in
// turn, three times over (interleaved, so load changes hit both alike); each
// run prints one JSON line: ns per island step (10^8 steps), µs per horde
// tick at 300 and 10 000 enemies, each the best of 3 samples, and the island
// digest (builds that differ in speed must not differ in it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dirs = process.argv.slice(2).map((d) => path.resolve(d));
if (dirs.length === 0) {
  console.error('usage: node web/tests/bench-node.mjs PKG_DIR [PKG_DIR...]');
  process.exit(2);
}
const STEPS = Number(process.env.TICKWISE_CPU_STEPS || 100_000_000);
const HORDE = [[300, 20000], [10000, 300]];

const cpuMs = (f) => {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};
const best = (k, f) => Math.min(...Array.from({ length: k }, f));

async function load(dir) {
  const m = await import(pathToFileURL(path.join(dir, 'tickwise_web.js')).href);
  m.initSync({ module: readFileSync(path.join(dir, 'tickwise_web_bg.wasm')) });
  return m;
}

const mods = [];
for (const dir of dirs) mods.push([dir, await load(dir)]);
for (let round = 0; round < 3; round += 1) {
  for (const [dir, { Island, Horde }] of mods) {
    const island = new Island();
    island.advance(100000); // warm up
    const ms = best(3, () => {
      island.reset();
      island.stopRecording();
      return cpuMs(() => island.advance(STEPS));
    });
    const out = { pkg: dir, islandNsPerStep: (ms * 1e6) / STEPS, islandDigest: island.digest() };
    for (const [enemies, ticks] of HORDE) {
      const horde = Horde.withEnemies(enemies);
      horde.stopRecording();
      horde.advance(30); // warm up
      const hms = best(3, () => {
        horde.reset();
        horde.stopRecording();
        return cpuMs(() => horde.advance(ticks));
      });
      out[`horde${enemies}UsPerTick`] = (hms * 1000) / ticks;
    }
    console.log(JSON.stringify(out));
  }
}
