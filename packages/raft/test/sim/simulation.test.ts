// Runs the deterministic Raft simulation over many seeds. Defaults: seeds 1-5000 here and
// 5001-10000 in simulation-second-half.test.ts, so CI's two workers run 10,000 seeds side by
// side (about 35 s each on this machine).
//   RAFT_SEED=n          replay exactly seed n (verbose trace with RAFT_TRACE=1)
//   RAFT_SEEDS=count     run `count` seeds (RAFT_SEED_START=first, default 1)
//   RAFT_SIM_STEPS=n     fault-phase steps per seed (default 3000)

import { describe, expect, it } from 'vitest';
import { runSimulation, type SimResult } from './simulation.js';

const env = process.env;
const single = env.RAFT_SEED !== undefined ? Number(env.RAFT_SEED) : null;
const half = (globalThis as { MQ_SIM_SECOND_HALF?: boolean }).MQ_SIM_SECOND_HALF === true;
const count = Number(env.RAFT_SEEDS ?? 5000);
const start = Number(env.RAFT_SEED_START ?? 1) + (half ? count : 0);
const faultSteps = Number(env.RAFT_SIM_STEPS ?? 3000);

const seedCount = single !== null ? 1 : count;
// About 5 microseconds per step on this machine; generous so big runs are not cut short.
const timeoutMs = 60_000 + seedCount * faultSteps * 0.05;

describe('raft simulation', () => {
  // A replay (RAFT_SEED) runs once, in the first file.
  if (half && single !== null) return;
  const title = single !== null ? `replays seed ${single}` : `keeps safety over seeds ${start}-${start + count - 1}`;

  it(title, () => {
    const seeds = single !== null ? [single] : Array.from({ length: count }, (_, i) => start + i);
    const totals = {
      steps: 0,
      acked: 0,
      elections: 0,
      crashes: 0,
      corruptions: 0,
      confChanges: 0,
      transfers: 0,
      snapshotsRestored: 0,
      repairedWithoutLeader: 0,
      leaseChecks: 0,
    };
    const results: SimResult[] = [];
    for (const seed of seeds) {
      const result = runSimulation({ seed, faultSteps, verbose: env.RAFT_TRACE === '1' });
      results.push(result);
      for (const key of Object.keys(totals) as (keyof typeof totals)[]) totals[key] += result[key];
    }
    console.log(`raft simulation: ${seeds.length} seeds`, JSON.stringify(totals));
    // The runs must actually exercise the system, not pass vacuously.
    expect(totals.acked).toBeGreaterThan(seeds.length * 10);
    expect(totals.elections).toBeGreaterThanOrEqual(seeds.length);
    if (seeds.length >= 50) {
      expect(totals.crashes).toBeGreaterThan(0);
      expect(totals.corruptions).toBeGreaterThan(0);
      expect(totals.confChanges).toBeGreaterThan(0);
      expect(totals.snapshotsRestored).toBeGreaterThan(0);
      expect(totals.leaseChecks).toBeGreaterThan(0);
    }
    // Seeds 1-5000 repair a damaged replica without a leader 490 times.
    if (seeds.length >= 1000) expect(totals.repairedWithoutLeader).toBeGreaterThan(0);
  }, timeoutMs);
});
