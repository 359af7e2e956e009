import { boot } from './horde.js';
import { start } from './start.js';

start(boot);
