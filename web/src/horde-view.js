// Drawing the horde sim on a 2D canvas, shared by the horde page and the
// netplay page (one view per peer): the camera follows one hero (the view's
// own player's), drawn at the canvas's centre; every other hero is drawn
// where it is. Presentation only.

const SCALE = 0.5; // screen px per field px
const BG = '#0f172a';

/**
 * Draws one view of the field on `g`'s whole canvas.
 * @param {CanvasRenderingContext2D} g
 * @param {Float32Array} pos interpolated positions in px:
 *   [n, hero0X, hero0Y, …, hero(n-1)X, hero(n-1)Y, x0, y0, …] (hero count, heroes, enemies)
 * @param {{fieldWidth: number, fieldHeight: number, playerRadius: number,
 *          enemyRadius: number, attackRadius: number}} info the page's `drawInfo()`
 * @param {string[]} heroColors one colour per hero, by player index
 * @param {number} follow the hero the camera follows (default 0)
 */
export function drawHordeView(g, pos, info, heroColors, follow = 0) {
  const W = g.canvas.width;
  const H = g.canvas.height;
  const n = Math.max(0, Math.trunc(pos[0] ?? 0));
  const hero = (h) => [pos[1 + 2 * h], pos[2 + 2 * h]];
  const [camX, camY] = n > 0 ? hero(Math.min(follow, n - 1)) : [info.fieldWidth / 2, info.fieldHeight / 2];
  const sx = (x) => (x - camX) * SCALE + W / 2;
  const sy = (y) => (y - camY) * SCALE + H / 2;
  g.fillStyle = BG;
  g.fillRect(0, 0, W, H);
  // Field grid every 128 px and the field's edge, so motion is visible.
  g.fillStyle = '#1e293b';
  const step = 128;
  for (let x = Math.ceil((camX - W / SCALE / 2) / step) * step; sx(x) < W; x += step) g.fillRect(sx(x), 0, 1, H);
  for (let y = Math.ceil((camY - H / SCALE / 2) / step) * step; sy(y) < H; y += step) g.fillRect(0, sy(y), W, 1);
  g.strokeStyle = '#475569';
  g.strokeRect(sx(0), sy(0), info.fieldWidth * SCALE, info.fieldHeight * SCALE);
  // Enemies.
  const r = Math.max(1, info.enemyRadius * SCALE);
  g.fillStyle = '#f43f5e';
  for (let i = 1 + 2 * n; i + 1 < pos.length; i += 2) {
    const x = sx(pos[i]);
    const y = sy(pos[i + 1]);
    if (x > -r && x < W + r && y > -r && y < H + r) g.fillRect(x - r, y - r, 2 * r, 2 * r);
  }
  // Every hero with its attack radius, each in its player's colour.
  for (let h = 0; h < n; h += 1) {
    const [x, y] = hero(h);
    g.strokeStyle = '#38bdf8';
    g.beginPath();
    g.arc(sx(x), sy(y), info.attackRadius * SCALE, 0, Math.PI * 2);
    g.stroke();
    g.fillStyle = heroColors[h % heroColors.length];
    g.beginPath();
    g.arc(sx(x), sy(y), Math.max(2, info.playerRadius * SCALE), 0, Math.PI * 2);
    g.fill();
  }
}
