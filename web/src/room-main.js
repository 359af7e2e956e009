// The horde's room page: the shared lobby (room.js) with the horde's class
// (`RoomMatch` from tickwise-web's horde_room.rs) and its drawing.
import init, { RoomMatch } from './pkg/tickwise_web.js';
import { boot } from './room.js';
import { drawHordeView } from './horde-view.js';
import { start } from './start.js';

const HERO_COLORS = ['#e0f2fe', '#fde68a', '#bbf7d0', '#fbcfe8'];

start(() => boot({
  init,
  RoomMatch,
  title: 'Room · one horde match, one player per tab',
  blurb: 'The co-op horde at 30 Hz. Each tab moves only its own hero (arrow keys or WASD).',
  players: [2, 3, 4],
  canvas: [560, 560],
  draw: (ctx, match, info, slot) => drawHordeView(ctx, match.interpolated(), info, HERO_COLORS, slot),
}));
