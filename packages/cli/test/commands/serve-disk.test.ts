// `mq serve` on a data volume that runs low (issue 14): the disk watermark refuses sends and
// queue creation with 507 storage_full before anything is appended, while consumers drain the
// queue to empty; once space comes back the alarm clears by itself and sends resume, with no
// restart. The volume is a probe the test sets (a real small filesystem: scripts/disk-full.sh).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServeHandle, parseServeArgs, startServe } from '../../src/index.js';

const MiB = 1024 ** 2;
const RESERVE_BYTES = 4 * MiB;
const ADMIN = {
  adminHost: '127.0.0.1',
  adminPort: 0,
  adminTokenFile: null,
  adminToken: 'a'.repeat(32),
  tls: null,
  adminTls: null,
  connectionsPerAddress: 1024,
};
/** Longest wait for the monitor to see a change of the (fake) volume. */
const CHANGE_WAIT_MS = 10_000;

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A volume whose free space the test sets. */
function fakeVolume(freeBytes: number) {
  const volume = { freeBytes };
  const probe = async () => ({ freeBytes: volume.freeBytes, totalBytes: 1024 * MiB });
  return { volume, probe };
}

async function keyOn(server: ServeHandle): Promise<Record<string, string>> {
  await server.member.admin.createAccount('t', undefined);
  return { authorization: `Bearer ${(await server.member.admin.createKey('t')).key}` };
}

/** GET /readyz's body, once its disk alarm reads `alarm` (bounded wait; fails otherwise). */
async function readyzOnceAlarm(server: ServeHandle, alarm: boolean): Promise<Record<string, unknown>> {
  const url = server.baseUrl.replace(/\/v1$/, '/readyz');
  const deadline = Date.now() + CHANGE_WAIT_MS;
  for (;;) {
    const response = await fetch(url);
    const body = (await response.json()) as { disk?: { alarm: boolean } };
    if (body.disk?.alarm === alarm) {
      expect(response.status).toBe(200); // ready either way: consumers must reach it
      return body;
    }
    if (Date.now() > deadline) throw new Error(`disk alarm never became ${alarm}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('mq serve on a data volume below its reserve', () => {
  it('parses --disk-reserve and MQ_DISK_RESERVE', () => {
    expect(parseServeArgs(['--disk-reserve', '64MiB'], {})).toMatchObject({ diskReserveBytes: 64 * MiB });
    expect(parseServeArgs([], { MQ_DISK_RESERVE: '1000' })).toMatchObject({ diskReserveBytes: 1000 });
    expect(() => parseServeArgs(['--disk-reserve', '1GB'], {})).toThrow(/--disk-reserve/);
  });

  it('answers 507 storage_full to sends while consumers drain, then resumes by itself', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-serve-disk-'));
    dirs.push(dataDir);
    const { volume, probe } = fakeVolume(512 * MiB);
    const server = await startServe({
      dataDir,
      host: '127.0.0.1',
      port: 0,
      ...ADMIN,
      diskReserveBytes: RESERVE_BYTES,
      diskProbe: probe,
      diskPollMs: 10,
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
      expect((await fetch(`${v1}/spools/default/queues/jobs`, { method: 'PUT', headers: auth })).status).toBe(201);
      const sent: string[] = [];
      for (let i = 0; i < 12; i++) {
        const body = `m${i}`;
        expect((await send(body)).status).toBe(201);
        sent.push(body);
      }

      volume.freeBytes = RESERVE_BYTES - 1;
      const low = await readyzOnceAlarm(server, true);
      expect(low['disk']).toMatchObject({ freeBytes: RESERVE_BYTES - 1, reserveBytes: RESERVE_BYTES });
      const refused = await send('refused');
      expect(refused.status).toBe(507);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toMatchObject({ kind: 'storage_full' });
      const create = await fetch(`${v1}/spools/default/queues/other`, { method: 'PUT', headers: auth });
      expect(create.status).toBe(507);

      // Consumers drain to empty under the alarm: receive, nack, release, fail, discard, ack.
      const bodies: string[] = [];
      const first = await receive();
      expect((await settle('nack', first.headers.get('svc-lease')!)).status).toBe(204);
      const second = await receive();
      expect((await settle('release', second.headers.get('svc-lease')!)).status).toBe(204);
      const third = await receive();
      const failedBody = await third.text();
      expect((await settle('fail', third.headers.get('svc-lease')!)).status).toBe(204);
      const head = await fetch(`${v1}/spools/default/queues/jobs/failures/head`, { headers: auth });
      expect(await head.text()).toBe(failedBody);
      bodies.push(failedBody);
      const discard = await settle('discard', head.headers.get('svc-lease')!);
      expect(discard.status).toBe(204);
      for (;;) {
        const got = await receive();
        if (got.status === 204) break;
        expect(got.status).toBe(200);
        bodies.push(await got.text());
        expect((await settle('ack', got.headers.get('svc-lease')!)).status).toBe(204);
      }
      expect(bodies.sort()).toEqual([...sent].sort());
      const stats = await (await fetch(`${v1}/spools/default/stats`, { headers: auth })).json();
      expect(stats).toMatchObject({ stats: { total: 0, visible: 0, pending: 0, failed: 0 } });
      const metrics = await (await fetch(v1.replace(/\/v1$/, '/metrics'))).text();
      expect(metrics).toContain('mq_member_disk_alarm{member="n1"} 1\n');
      expect(metrics).toMatch(/^mq_member_disk_refused_total\{member="n1"\} 2$/m);

      // Above the reserve but inside the margin: still refused (hysteresis).
      volume.freeBytes = RESERVE_BYTES + 1;
      await readyzOnceAlarm(server, true);
      expect((await send('still refused')).status).toBe(507);
      volume.freeBytes = RESERVE_BYTES + Math.ceil(RESERVE_BYTES / 10);
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
