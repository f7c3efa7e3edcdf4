// The second half of CI's 10,000 simulation seeds (simulation.test.ts runs the first), a file
// of its own so vitest runs both halves at once.
(globalThis as { MQ_SIM_SECOND_HALF?: boolean }).MQ_SIM_SECOND_HALF = true;
await import('./simulation.test.js');
