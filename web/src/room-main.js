import { boot } from './room.js';
import { start } from './start.js';

start(boot);
