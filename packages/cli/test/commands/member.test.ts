import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCa, makeLeaf } from '@spoolmq/raft';
import { afterAll, describe, expect, it } from 'vitest';
import { MEMBER_DATA_ROOT_DEFAULT, type MemberHandle, UsageError, parseMemberArgs, runCli, startMember } from '../../src/index.js';
import { captureIo } from '../io.js';

const PEERS = 'n1=127.0.0.1:7001,n2=127.0.0.1:7002,n3=127.0.0.1:7003';
const INSECURE = { MQ_INSECURE_CLUSTER: 'true' };

describe('parseMemberArgs', () => {
  it('requires an id and the peers, listens on its own peer address and stores under ./data/<id>', () => {
    expect(parseMemberArgs(['--id', 'n2', '--peers', PEERS], INSECURE)).toEqual({
      id: 'n2',
      peers: { n1: '127.0.0.1:7001', n2: '127.0.0.1:7002', n3: '127.0.0.1:7003' },
      listen: '127.0.0.1:7002',
      dataDir: `${MEMBER_DATA_ROOT_DEFAULT}/n2`,
      host: '127.0.0.1',
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 8081,
      adminTokenFile: join(MEMBER_DATA_ROOT_DEFAULT, 'n2', 'admin-token'),
      adminToken: null,
      join: false,
      clusterTls: { mode: 'insecure' },
      tls: null,
      adminTls: null,
      connectionsPerAddress: 1024,
      handOffSeconds: 10,
    });
    expect(parseMemberArgs(['--id', 'n2', '--peers', PEERS, '--join'], INSECURE)).toMatchObject({ join: true });
    expect(() => parseMemberArgs(['--peers', PEERS], INSECURE)).toThrow(/--id/);
    expect(() => parseMemberArgs(['--id', 'n1'], INSECURE)).toThrow(/--peers/);
    expect(() => parseMemberArgs(['--id', 'n4', '--peers', PEERS], INSECURE)).toThrow(/must include this member/);
  });

  it('reads MQ_ID, MQ_PEERS, MQ_LISTEN, MQ_DATA_DIR, MQ_PORT, MQ_HOST; flags win', () => {
    const env = { MQ_ID: 'n3', MQ_PEERS: PEERS, MQ_LISTEN: '0.0.0.0:7003', MQ_DATA_DIR: '/data', MQ_PORT: '8083', MQ_HOST: '0.0.0.0', ...INSECURE };
    expect(parseMemberArgs([], env)).toMatchObject({ id: 'n3', listen: '0.0.0.0:7003', dataDir: '/data', port: 8083, host: '0.0.0.0' });
    expect(parseMemberArgs(['--id', 'n1', '--listen', '127.0.0.1:0', '--data', 'd1', '--port', '0'], env)).toMatchObject({
      id: 'n1',
      listen: '127.0.0.1:0',
      dataDir: 'd1',
      port: 0,
    });
  });

  it('refuses bad values and unknown flags; --help is undefined', () => {
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', 'n1=127.0.0.1'], INSECURE)).toThrow(UsageError);
    expect(() => parseMemberArgs(['--id', 'n 1', '--peers', PEERS], INSECURE)).toThrow(UsageError);
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', PEERS, '--listen', 'nowhere'], INSECURE)).toThrow(/--listen/);
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', PEERS, '--members', PEERS], INSECURE)).toThrow(UsageError);
    expect(parseMemberArgs(['--help'], INSECURE)).toBeUndefined();
  });

  it('wants the cluster certificates, or --insecure-cluster said out loud', () => {
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', PEERS], {})).toThrow(
      /needs the cluster's certificates: pass --cluster-ca, --cluster-cert and --cluster-key/,
    );
    const files = ['--cluster-ca', 'ca.crt', '--cluster-cert', 'n1.crt', '--cluster-key', 'n1.key'];
    expect(parseMemberArgs(['--id', 'n1', '--peers', PEERS, ...files], {})).toMatchObject({
      clusterTls: {
        mode: 'tls',
        caFile: 'ca.crt',
        certFile: 'n1.crt',
        keyFile: 'n1.key',
        crlFile: null,
      },
    });
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', PEERS, ...files.slice(0, 4)], {})).toThrow(
      /go together/,
    );
    expect(() => parseMemberArgs(['--id', 'n1', '--peers', PEERS, ...files, '--insecure-cluster'], {})).toThrow(
      /not both/,
    );
    expect(parseMemberArgs(['--id', 'n1', '--peers', PEERS, '--insecure-cluster'], {})).toMatchObject({
      clusterTls: { mode: 'insecure' },
    });
  });
});

/** A CA and member certificates n1..nN under `dir`; each member's MQ_CLUSTER_* environment. */
async function memberCerts(dir: string, ids: readonly string[]): Promise<Map<string, Record<string, string>>> {
  const ca = await makeCa('test', Date.now());
  await writeFile(join(dir, 'ca.crt'), ca.cert);
  const env = new Map<string, Record<string, string>>();
  for (const id of ids) {
    const leaf = await makeLeaf(ca, { role: 'member', name: id }, [], Date.now());
    await writeFile(join(dir, `${id}.crt`), leaf.cert);
    await writeFile(join(dir, `${id}.key`), leaf.key);
    env.set(id, {
      MQ_CLUSTER_CA: join(dir, 'ca.crt'),
      MQ_CLUSTER_CERT: join(dir, `${id}.crt`),
      MQ_CLUSTER_KEY: join(dir, `${id}.key`),
    });
  }
  return env;
}

/** Distinct free loopback ports (held until all are found). */
async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolve) => {
          server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

describe('startMember (three in one process)', () => {
  let root = '';
  const handles: MemberHandle[] = [];

  afterAll(async () => {
    await Promise.all(handles.map((handle) => handle.close()));
    if (root !== '') await rm(root, { recursive: true, force: true });
  });

  it('forms a cluster over mutual TLS; every member serves the API, /readyz and its Raft state in /metrics', async () => {
    root = await mkdtemp(join(tmpdir(), 'mq-member-test-'));
    const ports = await freePorts(3);
    const peers = Object.fromEntries(ports.map((port, i) => [`n${i + 1}`, `127.0.0.1:${port}`]));
    const certs = await memberCerts(root, Object.keys(peers));
    for (const id of Object.keys(peers)) {
      const env = {
        MQ_PEERS: Object.entries(peers).map(([k, v]) => `${k}=${v}`).join(','),
        MQ_ADMIN_TOKEN: 'k'.repeat(20),
        ...certs.get(id),
      };
      const options = parseMemberArgs(['--id', id, '--data', join(root, id), '--port', '0', '--admin-port', '0'], env)!;
      handles.push(await startMember(options));
    }
    await Promise.all(handles.map((handle) => handle.ready));
    for (const handle of handles) {
      const root = handle.baseUrl.replace(/\/v1$/, '');
      expect((await fetch(`${root}/healthz`)).status).toBe(200);
      await expect.poll(async () => (await fetch(`${root}/readyz`)).status, { timeout: 20_000 }).toBe(200);
      const metrics = await (await fetch(`${root}/metrics`)).text();
      expect(metrics).toContain(`mq_member_ready{member="${handle.member.id}"} 1`);
      expect(metrics).toContain('# TYPE mq_process_event_loop_lag_seconds histogram');
      // Raft groups name spools, so accounts: only the admin listener shows them.
      expect(metrics).not.toContain('mq_member_raft_role');
      const admin = await fetch(`http://127.0.0.1:${handle.adminPort}/metrics`, {
        headers: { authorization: `Bearer ${'k'.repeat(20)}` },
      });
      expect(await admin.text()).toMatch(/mq_member_raft_role\{member="n\d",group="meta",role="(leader|follower)"\} 1/);
    }
    // An account made through one member's admin backend; its key works through every member.
    await handles[0]!.member.admin.createAccount('acct', undefined);
    const auth = { authorization: `Bearer ${(await handles[0]!.member.admin.createKey('acct')).key}` };
    const serving = handles.filter((handle) => handle.member.replica('acct/default')?.isServing() === true);
    expect(serving).toHaveLength(1);
    // Through a member that is not the primary: the embedded gateway forwards.
    const other = handles.find((handle) => !serving.includes(handle))!;
    expect((await fetch(`${other.baseUrl}/spools/default/queues/q`, { method: 'PUT', headers: auth })).status).toBe(201);
    expect((await fetch(`${other.baseUrl}/spools/default/queues/q/send`, { method: 'POST', headers: auth, body: 'x' })).status).toBe(201);
    const received = await fetch(`${serving[0]!.baseUrl}/spools/default/queues/q/recv?waitSeconds=0`, { method: 'POST', headers: auth });
    expect(await received.text()).toBe('x');
  }, 60_000);
});

describe('mq member', () => {
  it('logs its addresses, waits for peers (not ready alone), and exits 0 on shutdown', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'mq-member-test-'));
    try {
      const [grpc] = await freePorts(1);
      // n2 is never started: n1 alone has no quorum, so it serves /healthz but not /readyz.
      const c = captureIo({ MQ_PEERS: `n1=127.0.0.1:${grpc},n2=127.0.0.1:1`, ...INSECURE });
      const running = runCli(['member', '--id', 'n1', '--data', dataDir, '--port', '0', '--admin-port', '0'], c.io);
      const started = await c.waitForLog((record) => typeof record['port'] === 'number');
      expect(started).toMatchObject({ memberId: 'n1', grpcAddress: `127.0.0.1:${grpc}`, dataDir });
      expect(c.logs.some((record) => record['insecureCluster'] === true && record['level'] === 40)).toBe(true);
      const root = (started['baseUrl'] as string).replace(/\/v1$/, '');
      expect((await fetch(`${root}/healthz`)).status).toBe(200);
      expect((await fetch(`${root}/readyz`)).status).toBe(503);
      c.shutdown.abort();
      expect(await running).toBe(0);
      expect(c.logs.some((record) => record['msg'] === 'mq member n1 stopped')).toBe(true);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a certificate made for another member', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mq-member-test-'));
    try {
      const certs = await memberCerts(dir, ['n2']);
      const c = captureIo({ MQ_PEERS: PEERS, ...certs.get('n2') });
      expect(await runCli(['member', '--id', 'n1', '--data', dir], c.io)).toBe(2);
      expect(c.err()).toContain('is the certificate of member n2, not of member n1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 with the usage when the id is missing', async () => {
    const c = captureIo({ MQ_PEERS: PEERS });
    expect(await runCli(['member'], c.io)).toBe(2);
    expect(c.err()).toContain('Usage: mq member');
  });
});
