#!/usr/bin/env node
// Gateway overhead benchmark: the gateway runs in a child process over a do-nothing service;
// this process drives it with keep-alive clients. Reports, per operation, the gateway process's
// CPU time per request (stable on a shared machine) and the wall-clock request rate (not).
// Needs the built package: `npx tsc -p packages/gateway/tsconfig.json` (or `npm run build`).
// Usage: node packages/gateway/bench/overhead.mjs [--count 20000] [--clients 16] [--payload 128]
import http from 'node:http';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}
const count = flag('count', 20_000);
const clients = flag('clients', 16);
const payloadBytes = flag('payload', 128);

const serverPath = fileURLToPath(new URL('./overhead-server.mjs', import.meta.url));
const child = spawn(process.execPath, [serverPath, String(payloadBytes)], { stdio: ['ignore', 'pipe', 'inherit'] });
let pending;
let buffered = '';
child.stdout.on('data', (data) => {
  buffered += data;
  for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
    const line = buffered.slice(0, at);
    buffered = buffered.slice(at + 1);
    pending?.(line);
  }
});
const nextLine = () => new Promise((resolve) => (pending = resolve));
const port = Number((await nextLine()).split(' ')[1]);
async function cpuMicros() {
  const line = nextLine();
  child.kill('SIGUSR2');
  return Number((await line).split(' ')[1]);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
function request(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, method, path, agent, headers: { authorization: 'Bearer k', ...headers } };
    const req = http.request(options, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode < 300 ? resolve() : reject(new Error(`${method} ${path}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function phase(name, op) {
  let left = count;
  const cpu0 = await cpuMicros();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    while (left-- > 0) await op();
  }));
  const wallMs = performance.now() - t0;
  const cpu1 = await cpuMicros();
  const cpuPerRequest = (cpu1 - cpu0) / count;
  const rate = (count / wallMs) * 1000;
  process.stdout.write(`${name.padEnd(24)} ${cpuPerRequest.toFixed(1).padStart(7)} us CPU/req ${rate.toFixed(0).padStart(8)} req/s\n`);
}

const body = Buffer.alloc(payloadBytes, 1);
const sendHeaders = { 'content-length': String(payloadBytes) };
const lease = { 'svc-lease': 'lease_aaaaaaaaaaaaaaaa' };
process.stdout.write(`gateway overhead: ${count} requests a phase, ${clients} clients, payload ${payloadBytes} B\n`);
try {
  await phase('warm-up (ack)', () => request('POST', '/v1/spools/default/ack', lease));
  await phase('ack', () => request('POST', '/v1/spools/default/ack', lease));
  await phase('send', () => request('POST', '/v1/spools/default/queues/jobs/send', sendHeaders, body));
  await phase('send + dedup key', () =>
    request('POST', '/v1/spools/default/queues/jobs/send', { ...sendHeaders, 'svc-dedup-string': 'order-1' }, body));
  await phase('receive', () => request('POST', '/v1/spools/default/queues/jobs/recv?waitSeconds=0'));
} finally {
  agent.destroy();
  child.kill('SIGTERM');
}
