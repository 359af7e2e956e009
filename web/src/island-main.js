import { boot } from './island.js';
import { start } from './start.js';

start(boot);
