// The bounded chaos scenario CI runs: three real members behind a fault-injecting proxy mesh and
// a gateway, the seeded workload for about a minute while every fault kind is injected at least
// once (SIGKILL, SIGSTOP past the election timeout, data directory wiped, partition, isolation,
// one-way cut, delay, drop), then heal, drain, rebuild check and the history checker. Any
// violation fails with the seed, the replay command and the history lines that show it; the
// history and the cluster's data and logs are kept on disk.
//
// MQ_CHAOS_SEED picks another seed (the schedule and the workload's choices follow from it).

import { describe, expect, it } from 'vitest';
import {
  FAULT_KINDS,
  MEMBER_ELECTION_TIMEOUT_MS,
  formatScenario,
  runScenario,
  scheduleDurationMsMin,
} from '../../src/chaos/index.js';
import { ensureCliBuilt } from '../../src/cluster/index.js';

const SEED_DEFAULT = 20_240_501;
const MEMBERS = 3;
/** The whole run: start-up, the fault phase (~53 s), settling, drain, collection. */
const SCENARIO_BOUND_MS = 300_000;

describe('chaos scenario (CI)', () => {
  it('injects every fault kind and the history checks valid', async () => {
    await ensureCliBuilt();
    const seed = Number(process.env['MQ_CHAOS_SEED'] ?? SEED_DEFAULT);
    const ids = Array.from({ length: MEMBERS }, (_, i) => `n${i + 1}`);
    const durationMs = scheduleDurationMsMin({
      members: ids,
      electionTimeoutMs: MEMBER_ELECTION_TIMEOUT_MS,
    });
    const log = (line: string): void => console.log(line);
    const result = await runScenario({ seed, durationMs, members: MEMBERS, log });
    const text = formatScenario(result);
    console.log(text);
    for (const kind of FAULT_KINDS) {
      expect(result.faults[kind], `${kind} injected`).toBeGreaterThan(0);
    }
    expect(result.drain.drained, text).toBe(true);
    expect(result.report.valid, text).toBe(true);
  }, SCENARIO_BOUND_MS);
});
