import { describe, expect, it } from 'vitest';
import {
  RAFT_CONFIG_DEFAULTS,
  RaftConfigError,
  validateConfig,
  type RaftConfig,
} from '../../src/core/config.js';

const good: RaftConfig = { ...RAFT_CONFIG_DEFAULTS, id: 'n1', random: () => 0 };

describe('validateConfig', () => {
  it('accepts the defaults', () => {
    expect(() => validateConfig(good)).not.toThrow();
  });

  it.each([
    [{ id: '' }, /id/],
    [{ electionTicks: 1, heartbeatTicks: 1, leaseTicks: 1 }, /electionTicks must be >= 2/],
    [{ heartbeatTicks: 10 }, /heartbeatTicks must be < electionTicks/],
    [{ leaseTicks: 10 }, /leaseTicks must be < electionTicks/],
    [{ leaseTicks: 0 }, /leaseTicks must be a positive integer/],
    [{ inflightMessagesMax: 0 }, /inflightMessagesMax/],
    [{ appendBytesMax: 1.5 }, /appendBytesMax/],
    [{ snapshotChunkBytes: -1 }, /snapshotChunkBytes/],
  ] as const)('refuses %j', (patch, message) => {
    expect(() => validateConfig({ ...good, ...patch })).toThrow(RaftConfigError);
    expect(() => validateConfig({ ...good, ...patch })).toThrow(message);
  });
});
