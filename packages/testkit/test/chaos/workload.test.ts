// The workload model and its seeded planners: validation, determinism, unique payloads, dedup
// keys where windows are, and every consumer action reachable.

import { describe, expect, it } from 'vitest';
import { Prng } from '@spoolmq/raft';
import {
  CONSUMER_ACTIONS,
  type ConsumerAction,
  clientSeed,
  defaultWorkloadModel,
  planSend,
  planSettle,
} from '../../src/chaos/workload.js';

describe('workload model', () => {
  it('has a valid default and refuses bad fields', () => {
    const model = defaultWorkloadModel(1);
    expect(model.queues.map((q) => q.name)).toEqual(['chaos-plain', 'chaos-dedup', 'chaos-delay']);
    expect(() => defaultWorkloadModel(1, { producers: 0 })).toThrow(/producers/);
    const quick = { requestTimeoutMs: 500, receiveWaitSeconds: 1 };
    expect(() => defaultWorkloadModel(1, quick)).toThrow(/long poll/);
    const badQueue = { ...model.queues[0]!, name: 'no spaces allowed' };
    expect(() => defaultWorkloadModel(1, { queues: [badQueue] })).toThrow(/bad queue name/);
    const zeroMix = { ...model.mix, ack: 0, nack: 0, release: 0, releaseDelayed: 0, fail: 0 };
    Object.assign(zeroMix, { renewThenAck: 0, ackAndSend: 0, discard: 0, abandon: 0 });
    expect(() => defaultWorkloadModel(1, { mix: zeroMix })).toThrow(/mix/);
  });

  it('plans the same sends from one seed, unique payloads, keys on dedup queues', () => {
    const model = defaultWorkloadModel(7);
    const plan = (seed: number) => {
      const prng = new Prng(seed);
      return Array.from({ length: 200 }, (_, i) => planSend(model, prng, 'p0', i + 1));
    };
    const sends = plan(clientSeed(7, 'producer', 0));
    expect(plan(clientSeed(7, 'producer', 0))).toEqual(sends);
    expect(new Set(sends.map((s) => s.payload)).size).toBe(200);
    for (const send of sends) {
      const queue = model.queues.find((q) => q.name === send.queue)!;
      expect(send.dedupKey !== undefined).toBe(queue.dedupWindowSeconds > 0);
      if (send.delaySeconds > 0) expect(queue.delayedFraction).toBeGreaterThan(0);
    }
    expect(sends.some((s) => s.delaySeconds > 0)).toBe(true);
    expect(new Set(sends.map((s) => s.queue)).size).toBe(3);
  });

  it('gives clients distinct, stable seeds', () => {
    const seedsOf = (i: number): number[] => [
      clientSeed(3, 'producer', i),
      clientSeed(3, 'consumer', i),
    ];
    const seeds = [0, 1, 2].flatMap(seedsOf);
    expect(new Set(seeds).size).toBe(6);
    expect(clientSeed(3, 'consumer', 2)).toBe(seeds[5]);
  });

  it('reaches every consumer action, and never abandons where it is not allowed', () => {
    const model = defaultWorkloadModel(9);
    const prng = new Prng(9);
    let n = 0;
    const seen = new Set<string>();
    const [plain, dedup] = model.queues;
    for (let i = 0; i < 2_000; i += 1) {
      const onPlain: ConsumerAction = planSettle(model, prng, plain!, 'c0', () => (n += 1));
      seen.add(onPlain.kind === 'release' && onPlain.delayMs > 0 ? 'releaseDelayed' : onPlain.kind);
      const onDedup = planSettle(model, prng, dedup!, 'c0', () => (n += 1));
      expect(onDedup.kind).not.toBe('abandon');
      if (onDedup.kind !== 'release') continue;
      expect(onDedup.delayMs).toBeLessThanOrEqual(model.releaseDelayMsMax);
    }
    expect(seen).toEqual(new Set(CONSUMER_ACTIONS));
  });
});
