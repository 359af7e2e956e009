// The duel's room page: the shared lobby (web/src/room.js, copied here by
// .ci/build-page.sh) with the duel's `RoomMatch` class (`room_page!` in
// examples/duel-web/src/room.rs) and its drawing. This is all a game writes.
import init, { RoomMatch } from './pkg/duel_page.js';
import { boot } from './room.js';
import { start } from './start.js';

const PADDLE_COLORS = ['#38bdf8', '#f97316'];

/** Draws the field: `match.interpolated()` is [ballX, ballY, leftY, rightY] in field units. */
function draw(g, match, info, slot) {
  const [bx, by, ly, ry] = match.interpolated();
  const cv = g.canvas;
  const sx = cv.width / info.width;
  const sy = cv.height / info.height;
  g.fillStyle = '#0f172a';
  g.fillRect(0, 0, cv.width, cv.height);
  g.fillStyle = '#1e293b';
  g.fillRect(cv.width / 2 - 1, 0, 2, cv.height);
  const ph = info.paddleHalf * sy;
  const xs = [info.paddleInset * sx - 6, (info.width - info.paddleInset) * sx];
  [ly, ry].forEach((y, i) => {
    g.fillStyle = PADDLE_COLORS[i];
    g.fillRect(xs[i], y * sy - ph, 6, 2 * ph);
    if (i === slot) {
      // This tab's paddle: outlined.
      g.strokeStyle = '#e2e8f0';
      g.strokeRect(xs[i] - 2, y * sy - ph - 2, 10, 2 * ph + 4);
    }
  });
  g.fillStyle = '#e2e8f0';
  g.beginPath();
  g.arc(bx * sx, by * sy, 6, 0, Math.PI * 2);
  g.fill();
}

start(() => boot({
  init,
  RoomMatch,
  title: 'Room · one duel, one paddle per tab',
  blurb: 'The duel at 62.5 Hz. Each tab moves only its own paddle: W / ↑ up, S / ↓ down, D / ← / Space smash.',
  players: [2],
  canvas: [640, 360],
  draw,
  rows: [['score', (s) => (s.score ? `${s.score[0]} - ${s.score[1]}${s.winner ? ` (${s.winner} wins)` : ''}` : '-')]],
}));
