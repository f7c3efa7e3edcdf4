import { describe, expect, it } from 'vitest';
import { UsageError, parseGatewayArgs, runCli, startGateway } from '../../src/index.js';
import { captureIo } from '../io.js';

const INSECURE = { MQ_INSECURE_CLUSTER: 'true' };

describe('parseGatewayArgs', () => {
  it('wants the cluster certificates, or --insecure-cluster said out loud', () => {
    expect(() => parseGatewayArgs(['--members', 'n1=a:1'], {})).toThrow(/mq gateway needs the cluster's certificates/);
    expect(() => parseGatewayArgs(['--members', 'n1=a:1'], { MQ_INSECURE_CLUSTER: 'maybe' })).toThrow(/true or false/);
    expect(parseGatewayArgs(['--members', 'n1=a:1', '--insecure-cluster'], {})).toMatchObject({
      clusterTls: { mode: 'insecure' },
      tls: null,
      connectionsPerAddress: 1024,
    });
    expect(parseGatewayArgs(['--members', 'n1=a:1', '--connections-per-address', '9000'], INSECURE)).toMatchObject({
      connectionsPerAddress: 9000,
    });
    expect(() => parseGatewayArgs(['--members', 'n1=a:1'], { ...INSECURE, MQ_CONNECTIONS_PER_ADDRESS: '0' })).toThrow(
      /MQ_CONNECTIONS_PER_ADDRESS must be 1-16384/,
    );
  });

  it('requires the members; reads MQ_MEMBERS, MQ_PORT, MQ_HOST; flags win', () => {
    expect(parseGatewayArgs(['--members', 'n1=a:7001,n2=b:7001'], INSECURE)).toEqual({
      members: { n1: 'a:7001', n2: 'b:7001' },
      gateways: 1,
      host: '127.0.0.1',
      port: 8080,
      clusterTls: { mode: 'insecure' },
      tls: null,
      connectionsPerAddress: 1024,
    });
    expect(parseGatewayArgs(['--members', 'n1=a:1', '--gateways', '3'], INSECURE)).toMatchObject({ gateways: 3 });
    const raised = parseGatewayArgs(['--members', 'n1=a:1', '--connections-per-address', '9000'], INSECURE);
    expect(raised).toMatchObject({ connectionsPerAddress: 9000 });
    const zero = { ...INSECURE, MQ_CONNECTIONS_PER_ADDRESS: '0' };
    expect(() => parseGatewayArgs(['--members', 'n1=a:1'], zero)).toThrow(/must be 1-16384/);
    expect(parseGatewayArgs(['--members', 'n1=a:1'], { MQ_GATEWAYS: '2', ...INSECURE })).toMatchObject({ gateways: 2 });
    for (const bad of ['0', '65', 'x', '1.5']) {
      expect(() => parseGatewayArgs(['--members', 'n1=a:1', '--gateways', bad], INSECURE)).toThrow(UsageError);
    }
    const env = { MQ_MEMBERS: 'm=x:1', MQ_PORT: '9000', MQ_HOST: '0.0.0.0', ...INSECURE };
    expect(parseGatewayArgs([], env)).toEqual({ members: { m: 'x:1' }, gateways: 1, host: '0.0.0.0', port: 9000, clusterTls: { mode: 'insecure' }, tls: null, connectionsPerAddress: 1024 });
    expect(parseGatewayArgs(['--members', 'k=y:2', '--port', '0'], env)).toEqual({ members: { k: 'y:2' }, gateways: 1, host: '0.0.0.0', port: 0, clusterTls: { mode: 'insecure' }, tls: null, connectionsPerAddress: 1024 });
    expect(() => parseGatewayArgs([], INSECURE)).toThrow(/--members/);
    expect(() => parseGatewayArgs(['--members', 'x'], INSECURE)).toThrow(UsageError);
    expect(() => parseGatewayArgs(['--members', 'n1=a:1', '--data', 'd'], INSECURE)).toThrow(UsageError);
    expect(parseGatewayArgs(['-h'], INSECURE)).toBeUndefined();
  });
});

describe('startGateway', () => {
  it('listens before any member is up: healthy, not ready, with its member links in /metrics', async () => {
    const gateway = await startGateway({
      members: { n1: '127.0.0.1:1' },
      gateways: 1,
      host: '127.0.0.1',
      port: 0,
      clusterTls: { mode: 'insecure' },
      tls: null,
      connectionsPerAddress: 1024,
    });
    try {
      const root = gateway.baseUrl.replace(/\/v1$/, '');
      expect((await fetch(`${root}/healthz`)).status).toBe(200);
      expect((await fetch(`${root}/readyz`)).status).toBe(503);
      const metrics = await (await fetch(`${root}/metrics`)).text();
      expect(metrics).toContain('mq_gateway_member_link_ready{member="n1"} 0');
      expect(metrics).toContain('mq_gateway_requests_total');
      expect(metrics).toContain('# TYPE mq_process_gc_pause_seconds histogram');
    } finally {
      await gateway.close();
    }
  });
});

describe('mq gateway', () => {
  it('logs one start line and exits 0 on shutdown', async () => {
    const c = captureIo({ MQ_MEMBERS: 'n1=127.0.0.1:1', ...INSECURE });
    const running = runCli(['gateway', '--port', '0'], c.io);
    const started = await c.waitForLog((record) => typeof record['port'] === 'number');
    expect(started).toMatchObject({ members: { n1: '127.0.0.1:1' } });
    c.shutdown.abort();
    expect(await running).toBe(0);
    expect(c.logs.some((record) => record['msg'] === 'mq gateway stopped')).toBe(true);
  });

  it('exits 2 with the usage without members', async () => {
    const c = captureIo();
    expect(await runCli(['gateway'], c.io)).toBe(2);
    expect(c.err()).toContain('Usage: mq gateway');
  });
});
