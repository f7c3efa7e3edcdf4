// `mq serve` whose heap nears its limit (issue 13 item 4): the memory watermark refuses sends,
// ack-and-send and queue creation with 503 unavailable (Retry-After) before anything is
// appended, while consumers drain the queue to empty; once the heap is back below the clear mark
// the alarm clears by itself and sends resume, with no restart. The heap here is a sampler the
// test sets; a real process with a small heap is scripts/memory-bound.mjs.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServeHandle, parseServeArgs, startServe } from '../../src/index.js';

const MiB = 1024 ** 2;
const LIMIT_BYTES = 100 * MiB;
const ADMIN = {
  adminHost: '127.0.0.1',
  adminPort: 0,
  adminTokenFile: null,
  adminToken: 'a'.repeat(32),
  tls: null,
  adminTls: null,
  connectionsPerAddress: 1024,
};
/** Longest wait for the monitor to see a change of the (fake) heap. */
const CHANGE_WAIT_MS = 10_000;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A heap whose use the test sets, against a 100 MiB limit. */
function fakeHeap(usedBytes: number) {
  const heap = { usedBytes };
  const sampler = () => ({ usedBytes: heap.usedBytes, limitBytes: LIMIT_BYTES });
  return { heap, sampler };
}

async function keyOn(server: ServeHandle): Promise<Record<string, string>> {
  await server.member.admin.createAccount('t', undefined);
  return { authorization: `Bearer ${(await server.member.admin.createKey('t')).key}` };
}

/** GET /readyz's body, once its memory alarm reads `alarm` (bounded wait; fails otherwise). */
async function readyzOnceAlarm(server: ServeHandle, alarm: boolean): Promise<Record<string, unknown>> {
  const url = server.baseUrl.replace(/\/v1$/, '/readyz');
  const deadline = Date.now() + CHANGE_WAIT_MS;
  for (;;) {
    const response = await fetch(url);
    const body = (await response.json()) as { memory?: { alarm: boolean } };
    if (body.memory?.alarm === alarm) {
      expect(response.status).toBe(200); // ready either way: consumers must reach it
      return body;
    }
    if (Date.now() > deadline) throw new Error(`memory alarm never became ${alarm}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits (bounded) until the member has sampled the heap at `usedBytes`. */
async function statusOnceUsed(server: ServeHandle, usedBytes: number): Promise<void> {
  const deadline = Date.now() + CHANGE_WAIT_MS;
  while (server.member.memoryStatus().usedBytes !== usedBytes) {
    if (Date.now() > deadline) throw new Error(`heap never sampled at ${usedBytes}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('mq serve with its heap near the limit', () => {
  it('parses --payload-cache and MQ_PAYLOAD_CACHE into the member option', () => {
    expect(parseServeArgs(['--payload-cache', '8MiB'], {})).toMatchObject({
      payloadCacheBytes: 8 * 1024 * 1024,
    });
    expect(parseServeArgs([], { MQ_PAYLOAD_CACHE: '0' })).toMatchObject({ payloadCacheBytes: 0 });
  });

  it('parses --memory-high-percent and MQ_MEMORY_HIGH_PERCENT', () => {
    expect(parseServeArgs(['--memory-high-percent', '75'], {})).toMatchObject({ memoryHighPercent: 75 });
    expect(parseServeArgs([], { MQ_MEMORY_HIGH_PERCENT: '90' })).toMatchObject({ memoryHighPercent: 90 });
    expect(parseServeArgs([], {})).not.toHaveProperty('memoryHighPercent');
    for (const bad of ['10', '100', '8O', '80%', '']) {
      expect(() => parseServeArgs(['--memory-high-percent', bad], {})).toThrow(/--memory-high-percent/);
    }
  });

  it('answers 503 to growth while consumers drain, then resumes by itself', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-serve-memory-'));
    dirs.push(dataDir);
    const { heap, sampler } = fakeHeap(10 * MiB);
    const server = await startServe({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      ...ADMIN,
      memorySampler: sampler,
      memoryPollMs: 1,
    });
    try {
      const auth = await keyOn(server);
      const v1 = server.baseUrl;
      const send = (body: string) =>
        fetch(`${v1}/spools/default/queues/jobs/send`, { method: 'POST', headers: auth, body });
      const receive = () =>
        fetch(`${v1}/spools/default/queues/jobs/recv?waitSeconds=0`, { method: 'POST', headers: auth });
      const settle = (op: string, lease: string) =>
        fetch(`${v1}/spools/default/${op}`, { method: 'POST', headers: { ...auth, 'svc-lease': lease } });
      const total = async () =>
        ((await (await fetch(`${v1}/spools/default/stats`, { headers: auth })).json()) as {
          stats: { total: number };
        }).stats.total;
      expect((await fetch(`${v1}/spools/default/queues/jobs`, { method: 'PUT', headers: auth })).status).toBe(201);
      const sent: string[] = [];
      for (let i = 0; i < 12; i++) {
        const body = `m${i}`;
        expect((await send(body)).status).toBe(201);
        sent.push(body);
      }

      heap.usedBytes = 80 * MiB; // the high mark itself
      const high = await readyzOnceAlarm(server, true);
      expect(high['memory']).toMatchObject({
        usedBytes: 80 * MiB,
        limitBytes: LIMIT_BYTES,
        highBytes: 80 * MiB,
        clearBytes: 70 * MiB,
      });
      const refused = await send('refused');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toMatchObject({ kind: 'unavailable' });
      const create = await fetch(`${v1}/spools/default/queues/other`, { method: 'PUT', headers: auth });
      expect(create.status).toBe(503);
      // ack-and-send grows the store too: refused before anything, its ack included.
      const held = await receive();
      const heldLease = held.headers.get('svc-lease')!;
      const swap = await fetch(`${v1}/spools/default/queues/jobs/ack-and-send`, {
        method: 'POST',
        headers: { ...auth, 'svc-lease': heldLease },
        body: 'swapped',
      });
      expect(swap.status).toBe(503);
      expect(await total()).toBe(12); // nothing appended, nothing acked
      expect((await settle('nack', heldLease)).status).toBe(204); // the lease still holds

      // Consumers drain to empty under the alarm.
      const bodies: string[] = [];
      for (;;) {
        const got = await receive();
        if (got.status === 204) break;
        expect(got.status).toBe(200);
        bodies.push(await got.text());
        expect((await settle('ack', got.headers.get('svc-lease')!)).status).toBe(204);
      }
      expect(bodies.sort()).toEqual([...sent].sort());
      expect(await total()).toBe(0);
      const metrics = await (await fetch(v1.replace(/\/v1$/, '/metrics'))).text();
      expect(metrics).toContain('mq_member_memory_alarm{member="n1"} 1\n');
      expect(metrics).toMatch(/^mq_member_memory_refused_total\{member="n1"\} 3$/m);
      expect(metrics).toContain(`mq_member_memory_limit_bytes{member="n1"} ${LIMIT_BYTES}\n`);

      // Below the high mark but above the clear mark: still refused (hysteresis).
      heap.usedBytes = 75 * MiB;
      await statusOnceUsed(server, 75 * MiB);
      expect(server.member.memoryStatus().alarm).toBe(true);
      expect((await send('still refused')).status).toBe(503);
      heap.usedBytes = 70 * MiB - 1;
      await readyzOnceAlarm(server, false);
      expect((await send('after')).status).toBe(201);
      const after = await receive();
      expect(await after.text()).toBe('after');
      expect((await settle('ack', after.headers.get('svc-lease')!)).status).toBe(204);
      // Served throughout by the spool's first opening: no restart, no failover.
      const replica = server.member.status().spools.find((s) => s.spool.endsWith('default'));
      expect(replica).toMatchObject({ openings: 1, failure: null });
    } finally {
      await server.close();
    }
  });
});
