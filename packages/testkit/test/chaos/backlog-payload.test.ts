// Backlog payloads and their descriptions, and the checker on backlog histories: a backlog
// message that is received intact and acked passes; one that is missing at the end is lost; one
// whose bytes changed by a single bit comes back under another description and is unexpected.

import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  BACKLOG_PAYLOAD_BYTES_MAX,
  BACKLOG_PAYLOAD_BYTES_MIN,
  backlogPayload,
  backlogReadBack,
  describePayload,
} from '../../src/chaos/backlog-payload.js';
import { backlogPlanLimits } from '../../src/chaos/backlog.js';
import { check } from '../../src/chaos/checker.js';
import { formatReport, type CheckReport } from '../../src/chaos/report.js';
import { Script, finalState } from './synthetic.js';

const KIB = 1024;
const SEED = 7;

describe('backlogPayload', () => {
  it('is deterministic per (seed, n, size), distinct across n and seeds', () => {
    const a = backlogPayload(SEED, 3, 64 * KIB);
    expect(Buffer.from(backlogPayload(SEED, 3, 64 * KIB)).equals(a)).toBe(true);
    expect(Buffer.from(backlogPayload(SEED, 4, 64 * KIB)).equals(a)).toBe(false);
    expect(Buffer.from(backlogPayload(SEED + 1, 3, 64 * KIB)).equals(a)).toBe(false);
    expect(a.byteLength).toBe(64 * KIB);
    expect(Buffer.from(a.subarray(0, 13)).toString('latin1')).toBe('mq-backlog:3:');
  });

  it('is incompressible', () => {
    const bytes = backlogPayload(SEED, 0, 64 * KIB);
    expect(deflateSync(bytes).byteLength).toBeGreaterThan(0.99 * bytes.byteLength);
  });

  it('refuses sizes out of range and bad numbers', () => {
    expect(() => backlogPayload(SEED, 0, BACKLOG_PAYLOAD_BYTES_MIN - 1)).toThrow(RangeError);
    expect(() => backlogPayload(SEED, 0, BACKLOG_PAYLOAD_BYTES_MAX + 1)).toThrow(RangeError);
    expect(() => backlogPayload(SEED, -1, 64 * KIB)).toThrow(RangeError);
  });
});

describe('describePayload', () => {
  it('names a backlog payload by number, size and digest', () => {
    const description = describePayload(backlogPayload(SEED, 12, 4 * KIB));
    expect(description).toMatch(/^b:12:4096:[0-9a-f]{32}$/);
  });

  it('changes when one bit of the payload changes, anywhere', () => {
    const bytes = backlogPayload(SEED, 12, 4 * KIB);
    const original = describePayload(bytes);
    for (const at of [0, 11, 20, 4 * KIB - 1]) {
      const changed = Buffer.from(bytes);
      changed[at]! ^= 0x10;
      expect(describePayload(changed), `bit flipped at ${at}`).not.toBe(original);
    }
    expect(describePayload(bytes.subarray(0, 4 * KIB - 1))).not.toBe(original);
  });

  it('keeps short payloads as their text, and names long foreign ones by digest', () => {
    expect(describePayload(new TextEncoder().encode('p:p0:1'))).toBe('p:p0:1');
    expect(describePayload(new Uint8Array(2 * KIB))).toMatch(/^\?:2048:[0-9a-f]{32}$/);
  });
});

describe('backlogPlanLimits', () => {
  it('leaves the workload its gibibyte and room for twice the backlog', () => {
    expect(backlogPlanLimits(2 * 2 ** 30)).toEqual({ payloadBytesPerSpoolMax: 5 * 2 ** 30 });
  });
});

/** Sends of two backlog messages answered 201 as b1 and b2. */
function backlogScript(): { s: Script; one: string; two: string } {
  const s = new Script();
  const one = describePayload(backlogPayload(SEED, 0, 4 * KIB));
  const two = describePayload(backlogPayload(SEED, 1, 4 * KIB));
  s.sent('backlog', one, 'b1', 0, 5);
  s.sent('backlog', two, 'b2', 1, 6);
  return { s, one, two };
}

function violations(report: CheckReport): Record<string, number> {
  const found = Object.entries(report.violations).filter(([, entry]) => entry.count > 0);
  return Object.fromEntries(found.map(([name, entry]) => [name, entry.count]));
}

describe('check on a backlog', () => {
  it('passes when every backlog message comes back intact and is acked', () => {
    const { s, one, two } = backlogScript();
    s.received('backlog', 'b1', one, 'L1', 100, 102, 30_000);
    s.settled('ack', 'backlog', 'b1', 'L1', 103, 104);
    s.received('backlog', 'b2', two, 'L2', 105, 107, 30_000);
    s.settled('ack', 'backlog', 'b2', 'L2', 108, 109);
    const report = check(s.history, finalState({ backlog: {} }));
    if (!report.valid) throw new Error(formatReport(report));
  });

  it('counts the backlog messages read back intact', () => {
    const { s, one, two } = backlogScript();
    s.received('backlog', 'b1', one, 'L1', 100, 102, 30_000);
    s.received('backlog', 'b1', one, 'L2', 103, 104, 30_000);
    const changed = `${two.slice(0, -1)}${two.endsWith('0') ? '1' : '0'}`;
    s.received('backlog', 'b2', changed, 'L3', 105, 106, 30_000);
    expect(backlogReadBack(s.history.operations())).toBe(1);
    s.received('backlog', 'b2', two, 'L4', 107, 108, 30_000);
    expect(backlogReadBack(s.history.operations())).toBe(2);
  });

  it('reports a backlog message missing at the end as lost', () => {
    const { s, one } = backlogScript();
    s.received('backlog', 'b1', one, 'L1', 100, 102, 30_000);
    s.settled('ack', 'backlog', 'b1', 'L1', 103, 104);
    const report = check(s.history, finalState({ backlog: {} }));
    expect(violations(report)).toEqual({ lost: 1 });
    expect(report.violations.lost.examples[0]?.messageId).toBe('b2');
  });

  it('reports a backlog message whose bytes changed as unexpected', () => {
    const { s, one, two } = backlogScript();
    const changed = Buffer.from(backlogPayload(SEED, 1, 4 * KIB));
    changed[3_000]! ^= 1;
    s.received('backlog', 'b1', one, 'L1', 100, 102, 30_000);
    s.settled('ack', 'backlog', 'b1', 'L1', 103, 104);
    s.received('backlog', 'b2', describePayload(changed), 'L2', 105, 107, 30_000);
    s.settled('ack', 'backlog', 'b2', 'L2', 108, 109);
    const report = check(s.history, finalState({ backlog: {} }));
    expect(report.valid).toBe(false);
    expect(violations(report)).toEqual({ unexpected: 1 });
    const explanation = report.violations.unexpected.examples[0]?.explanation ?? '';
    expect(explanation).toContain('(id b2) that no send carried');
    expect(explanation).not.toContain(two);
  });

  it('reports a changed backlog payload found in the final listing', () => {
    const { s, one, two } = backlogScript();
    const changed = Buffer.from(backlogPayload(SEED, 1, 4 * KIB));
    changed[4 * KIB - 1]! ^= 0x80;
    s.received('backlog', 'b1', one, 'L1', 100, 102, 30_000);
    s.settled('ack', 'backlog', 'b1', 'L1', 103, 104);
    const listed = { id: 'b2', state: 'visible' as const, payload: describePayload(changed) };
    const report = check(s.history, finalState({ backlog: { messages: [listed] } }));
    expect(report.valid).toBe(false);
    expect(report.violations.unexpected.count).toBeGreaterThan(0);
    expect(JSON.stringify(report.violations.unexpected.examples)).toContain(two.slice(0, 8));
  });
});
