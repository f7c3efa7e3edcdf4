#!/usr/bin/env node
// Backlog benchmark (issue 13): a backlog bounded by the disk, not by memory. Two parts:
//   1. heap: in a child process (node --expose-gc), one spool engine over the on-disk segment
//      store takes --messages sends of --small-payload bytes; prints heap bytes per stored
//      message (after a full GC), the store's size, the metadata-only snapshot's size and encode
//      and decode times (a restart costs the decode, not the payload bytes), and checks a sample
//      of payloads read back from disk byte for byte.
//   2. serve: `mq serve` as a process, filled with --fill-mib of incompressible --payload-kib
//      messages by --clients senders: fill MiB/s; send and receive+ack rates with an empty and a
//      full backlog; peak RSS (VmHWM); restart-to-ready after SIGTERM and after SIGKILL; a sample
//      of the backlog received after the restarts and checked byte for byte.
// The full targets (20 GiB serve, 8 GiB cluster, NATS beside) do not fit this machine in
// minutes; the defaults are scaled down, and the flags scale them up.
// Flags: --part heap|serve|all (default all) --messages 1000000 --small-payload 128
//   --fill-mib 768 --payload-kib 64 --clients 16 --probe 500 --sample 200
// Prints tables and writes bench-results/backlog.json.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT, machineInfo, machineLine, printTable, writeResults } from './lib/index.mjs';

const HEAP_CHILD = fileURLToPath(new URL('./backlog-heap.mjs', import.meta.url));
const TESTKIT = new URL('../../packages/testkit/dist/cluster/index.js', import.meta.url);

export async function run({ flags = {} } = {}) {
  const config = {
    part: flags.part ?? 'all',
    messages: intFlag(flags, 'messages', 1_000_000, 1, 20_000_000),
    smallPayload: intFlag(flags, 'small-payload', 128, 1, 65_536),
    fillMib: intFlag(flags, 'fill-mib', 768, 1, 1_000_000),
    payloadKib: intFlag(flags, 'payload-kib', 64, 1, 1024),
    clients: intFlag(flags, 'clients', 16, 1, 256),
    probe: intFlag(flags, 'probe', 500, 1, 100_000),
    sample: intFlag(flags, 'sample', 200, 1, 100_000),
  };
  const machine = machineInfo();
  const command = ['npm run bench -- backlog', ...process.argv.slice(3)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n\n`);
  const results = { machine, command, startedAt: new Date().toISOString(), config };
  if (config.part === 'all' || config.part === 'heap') results.heap = heapPart(config);
  if (config.part === 'all' || config.part === 'serve') results.serve = await servePart(config);
  const path = writeResults('backlog', results);
  process.stdout.write(`results: ${relative(REPO_ROOT, path)}\n`);
}

// ---- part 1: heap per stored message ----------------------------------------------------------

function heapPart(config) {
  const args = ['--expose-gc', '--max-old-space-size=4096', HEAP_CHILD];
  args.push(String(config.messages), String(config.smallPayload));
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.status !== 0) throw new Error(`heap child failed: ${child.stderr}`);
  const heap = JSON.parse(child.stdout.trim().split('\n').pop());
  printTable(
    ['messages', 'payload B', 'heap B/msg', 'RSS MiB', 'appends/s', 'disk MiB', 'snapshot B/msg', 'encode ms', 'decode ms', 'sample ok'],
    [[heap.messages, heap.payloadBytes, heap.heapBytesPerMessage, heap.rssMib, heap.appendsPerS, heap.diskMib, heap.snapshotBytesPerMessage, heap.encodeMs, heap.decodeMs, `${heap.sampleOk}/${heap.sample}`]],
  );
  return heap;
}

// ---- part 2: mq serve filled ------------------------------------------------------------------

async function servePart(config) {
  const { ServeProcess } = await import(TESTKIT.href);
  const serve = await ServeProcess.start();
  const payloadBytes = config.payloadKib * 1024;
  const pool = randomBytes(4 << 20);
  const payloadOf = (n) => {
    const out = Buffer.allocUnsafe(payloadBytes);
    out.writeUInt32BE(n, 0);
    const from = (n * 65_537) % (pool.length - payloadBytes);
    pool.copy(out, 4, from, from + payloadBytes - 4);
    return out;
  };
  const rss = new RssSampler(() => serve.node.pid);
  try {
    const api = new Api(new URL(serve.baseUrl).port, await serve.apiKey(), config.clients);
    await api.mustCreate('backlog');
    await api.mustCreate('probe');
    const empty = await probe(api, config, payloadBytes);
    const target = Math.floor((config.fillMib * 1024 * 1024) / payloadBytes);
    const fillStart = performance.now();
    let next = 0;
    await parallel(config.clients, async () => {
      while (next < target) {
        const n = next++;
        const answer = await api.send('backlog', payloadOf(n));
        if (answer.status !== 201) throw new Error(`fill send ${n}: ${answer.status} ${answer.body}`);
        rss.sample();
      }
    });
    const fillS = (performance.now() - fillStart) / 1000;
    const full = await probe(api, config, payloadBytes);
    const drainRate = await recvAckRate(api, 'backlog', config.probe, config.clients, payloadOf);
    const peakRssMib = rss.peakMib();
    const term = await restartTimed(serve, 'SIGTERM');
    const kill = await restartTimed(serve, 'SIGKILL');
    const api2 = new Api(new URL(serve.baseUrl).port, await serve.apiKey(), config.clients);
    const checked = await recvAckRate(api2, 'backlog', config.sample, 1, payloadOf);
    const out = {
      fillMib: config.fillMib, messages: target, payloadKib: config.payloadKib,
      fillMibPerS: round((target * payloadBytes) / (1 << 20) / fillS),
      empty, full, drainFromDisk: drainRate, peakRssMib,
      restartAfterSigtermS: term, restartAfterSigkillS: kill,
      sampleAfterRestart: { checked: checked.count, corrupt: checked.corrupt },
    };
    printTable(
      ['fill MiB', 'fill MiB/s', 'sends/s empty', 'sends/s full', 'recv+ack/s empty', 'recv+ack/s full', 'recv+ack/s from disk', 'peak RSS MiB', 'ready after TERM s', 'ready after KILL s', 'sample corrupt'],
      [[config.fillMib, out.fillMibPerS, empty.sendsPerS, full.sendsPerS, empty.cyclesPerS, full.cyclesPerS, drainRate.perS, peakRssMib, term, kill, `${checked.corrupt}/${checked.count}`]],
    );
    return out;
  } finally {
    await serve.stop();
  }
}

/** Send then receive+ack rates of `probe` messages on the probe queue. */
async function probe(api, config, payloadBytes) {
  const payload = randomBytes(payloadBytes);
  let sent = 0;
  const start = performance.now();
  await parallel(config.clients, async () => {
    while (sent < config.probe) {
      sent++;
      const answer = await api.send('probe', payload);
      if (answer.status !== 201) throw new Error(`probe send: ${answer.status}`);
    }
  });
  const sendS = (performance.now() - start) / 1000;
  const cycles = await recvAckRate(api, 'probe', config.probe, config.clients, null);
  return { sendsPerS: round(config.probe / sendS), cyclesPerS: cycles.perS };
}

/** Receives and acks `count` messages of `queue`; checks payloads against `payloadOf` if given. */
async function recvAckRate(api, queue, count, clients, payloadOf) {
  let taken = 0;
  let corrupt = 0;
  let done = 0;
  const start = performance.now();
  await parallel(clients, async () => {
    while (taken < count) {
      taken++;
      const delivery = await api.receive(queue);
      if (delivery.status !== 200) return;
      if (payloadOf !== null && !delivery.body.equals(payloadOf(delivery.body.readUInt32BE(0)))) {
        corrupt++;
      }
      const acked = await api.ack(delivery.headers['svc-lease']);
      if (acked.status !== 204) throw new Error(`ack: ${acked.status}`);
      done++;
    }
  });
  return { count: done, corrupt, perS: round(done / ((performance.now() - start) / 1000)) };
}

/** Stops `mq serve` with `signal`, starts it again; seconds until it answers /healthz. */
async function restartTimed(serve, signal) {
  await serve.node.kill(signal);
  const start = performance.now();
  await serve.node.restart(600_000);
  return round((performance.now() - start) / 1000);
}

class RssSampler {
  constructor(pid) {
    this.pid = pid;
    this.peakKib = 0;
    this.lastMs = 0;
  }

  /** Reads VmHWM (the kernel's peak RSS) at most every 200 ms. */
  sample() {
    const now = performance.now();
    if (now - this.lastMs < 200) return;
    this.lastMs = now;
    this.read();
  }

  read() {
    try {
      const status = readFileSync(`/proc/${this.pid()}/status`, 'utf8');
      const match = /VmHWM:\s+(\d+) kB/.exec(status);
      if (match !== null) this.peakKib = Math.max(this.peakKib, Number(match[1]));
    } catch {
      // The process is restarting: its peak so far was read before.
    }
  }

  peakMib() {
    this.read();
    return round(this.peakKib / 1024);
  }
}

class Api {
  constructor(port, key, clients) {
    this.port = Number(port);
    this.auth = `Bearer ${key}`;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  }

  request(method, path, headers, body) {
    return new Promise((resolve, reject) => {
      const length = body === undefined ? 0 : body.length;
      const options = { agent: this.agent, host: '127.0.0.1', port: this.port, method, path };
      options.headers = { authorization: this.auth, 'content-length': length, ...headers };
      const req = http.request(options, (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  async mustCreate(name) {
    const json = { 'content-type': 'application/json' };
    const answer = await this.request('PUT', `/v1/spools/default/queues/${name}`, json, Buffer.from('{}'));
    if (answer.status !== 201) throw new Error(`create ${name}: ${answer.status} ${answer.body}`);
  }

  send(queue, payload) {
    const headers = { 'content-type': 'application/octet-stream' };
    return this.request('POST', `/v1/spools/default/queues/${queue}/send`, headers, payload);
  }

  receive(queue) {
    return this.request('POST', `/v1/spools/default/queues/${queue}/recv?waitSeconds=0`, {});
  }

  ack(lease) {
    return this.request('POST', '/v1/spools/default/ack', { 'svc-lease': lease });
  }
}

async function parallel(count, worker) {
  await Promise.all(Array.from({ length: count }, () => worker()));
}

function round(value) {
  return Math.round(value * 100) / 100;
}

function intFlag(flags, name, fallback, min, max) {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} must be an integer in ${min}..${max}`);
  }
  return value;
}
