import { boot } from './netplay.js';
import { start } from './start.js';

start(boot);
