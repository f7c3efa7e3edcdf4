#!/usr/bin/env node
// Remote-gateway benchmark: HTTP -> gateway -> gRPC stream -> member (local in-memory service),
// against the baseline of the same gateway calling the local service in-process. Keep-alive
// clients drive sends, then receive+ack cycles. Reports wall-clock rates (noisy on a shared
// machine) and each process's CPU time per operation (stable); the RPC hop's CPU is the remote
// setup's gateway+member CPU minus the in-process gateway's.
// Needs the built packages: `npx tsc -b packages/gateway packages/member` (or `npm run build`).
// Usage: node packages/gateway/bench/remote.mjs [--count 20000] [--clients 64] [--payload 128]
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}
const count = flag('count', 20_000);
const clients = flag('clients', 64);
const payloadBytes = flag('payload', 128);

/** A child process printing `key value` lines; `ask` sends SIGUSR2 for its CPU time. */
function child(script, args) {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const proc = spawn(process.execPath, [...(process.env.X_PROF ? ["--cpu-prof", "--cpu-prof-dir=/tmp/rprof"] : []), path, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let pending;
  let buffered = '';
  proc.stdout.on('data', (data) => {
    buffered += data;
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      pending?.(line.split(' ')[1]);
    }
  });
  const nextValue = () => new Promise((resolve) => (pending = resolve));
  return {
    nextValue,
    async cpuMicros() {
      const value = nextValue();
      proc.kill('SIGUSR2');
      return Number(await value);
    },
    stop: () => proc.kill('SIGTERM'),
  };
}

function client(port) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const request = (method, path, headers = {}, body) =>
    new Promise((resolve, reject) => {
      const options = { host: '127.0.0.1', port, method, path, agent, headers: { authorization: 'Bearer k', ...headers } };
      const req = http.request(options, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode < 300 ? resolve(res) : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}

async function phase(processes, ops, op) {
  let left = ops;
  const cpu0 = await Promise.all(processes.map((p) => p.cpuMicros()));
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (left-- > 0) await op();
  }));
  const wallMs = performance.now() - t0;
  const cpu1 = await Promise.all(processes.map((p) => p.cpuMicros()));
  return { rate: (ops / wallMs) * 1000, cpuPerOp: cpu1.map((c, i) => (c - cpu0[i]) / ops) };
}

async function run(setup) {
  const processes = [];
  let gatewayTarget = 'in-process';
  if (setup === 'remote') {
    const member = child('./remote-member.mjs', []);
    gatewayTarget = await member.nextValue();
    processes.push(member);
  }
  const gateway = child('./remote-gateway.mjs', [gatewayTarget]);
  const port = Number(await gateway.nextValue());
  processes.unshift(gateway);
  const http = client(port);
  const body = Buffer.alloc(payloadBytes, 1);
  const sendHeaders = { 'content-length': String(payloadBytes) };
  const results = {};
  try {
    await http.request('PUT', '/v1/spools/default/queues/bench');
    await http.request('PUT', '/v1/spools/default/queues/warm');
    const send = (queue) => () => http.request('POST', `/v1/spools/default/queues/${queue}/send`, sendHeaders, body);
    await phase(processes, Math.min(count, 5_000), send('warm'));
    results.send = await phase(processes, count, send('bench'));
    results.cycle = await phase(processes, count, async () => {
      const res = await http.request('POST', '/v1/spools/default/queues/bench/recv?waitSeconds=0');
      const lease = res.headers['svc-lease'];
      if (res.statusCode !== 200 || typeof lease !== 'string') throw new Error(`receive answered ${res.statusCode}`);
      await http.request('POST', '/v1/spools/default/ack', { 'svc-lease': lease });
    });
  } finally {
    http.close();
    for (const p of processes) p.stop();
  }
  return results;
}

const line = (name, r, baseline) => {
  const total = r.cpuPerOp.reduce((a, b) => a + b, 0);
  const split = r.cpuPerOp.length > 1 ? `gateway ${r.cpuPerOp[0].toFixed(1)} + member ${r.cpuPerOp[1].toFixed(1)}` : `gateway ${total.toFixed(1)}`;
  const hop = baseline === undefined ? '' : `   RPC hop ${(total - baseline.cpuPerOp[0]).toFixed(1)} us`;
  return `${name.padEnd(28)} ${r.rate.toFixed(0).padStart(7)} /s   CPU/op ${total.toFixed(1).padStart(6)} us (${split})${hop}\n`;
};

process.stdout.write(`remote gateway bench: ${count} ops a phase, ${clients} clients, payload ${payloadBytes} B\n`);
const local = await run('in-process');
const remote = await run('remote');
process.stdout.write(line('send, in-process', local.send));
process.stdout.write(line('send, via gRPC member', remote.send, local.send));
process.stdout.write(line('receive+ack, in-process', local.cycle));
process.stdout.write(line('receive+ack, via gRPC', remote.cycle, local.cycle));
