// Seeds 12–21 of the CI sweep (seed-sweep-a takes 2–11).
import { sweepTest } from './seed-sweep.js';

sweepTest(12, 21);
