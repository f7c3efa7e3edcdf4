// The fill part of `npm run bench -- backlog`: one target at a time (mq serve, the three-member
// cluster, NATS JetStream R1 and R3 on file storage; peers/targets.mjs), each as processes on
// this machine, driven over its own protocol by this process (peers/drivers.mjs):
//   empty     `probe` sends on the queue `probe`, then as many receive+acks: rates at no backlog;
//             one unmeasured round first, then `probeRounds` rounds, whose medians are the rates
//             (the first round after a start ran cold, and a round of 500 sends lasts 1-3 s, so
//             one snapshot, LevelDB compaction or neighbour's burst swung a single round 2x)
//   fill      `fillMib` MiB of incompressible messages into the queue `backlog` (each payload
//             starts with its index, the rest is from a random pool, so any copy is checkable)
//   full      the probe again beside the full backlog, measured the same way (a round first),
//             and the disk it takes (du of every replica's data, and its ratio to the payloads)
//   disk      `sample` receive+acks from the backlog's head, bytes checked
//   restart   every process of the target stopped with SIGTERM and started again on its data:
//             seconds from the start until a receive of the backlog answers (with the right
//             bytes), and apart from it the seconds the processes took to exit; then SIGKILL
//   sample    `sample` more receive+acks after the restarts, bytes checked
// Peak RSS is the kernel's VmHWM of each process, read every 500 ms and at the end, the highest
// across restarts. Every phase is bounded by its count and by `phaseSecondsMax`.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { printTable } from './lib/index.mjs';
import { openDriver, prepareQueue } from './peers/drivers.mjs';
import { processMemory } from './peers/support.mjs';
import { makeTarget } from './peers/targets.mjs';

/** mq's bench account plan for a backlog: the default plan's 1 GiB would end the fill early. */
const BACKLOG_PLAN = {
  messagesPerSpoolMax: 50_000_000,
  payloadBytesPerSpoolMax: 2 ** 50,
  dedupKeysPerSpoolMax: 2_000_000,
};
const READY_TIMEOUT_MS = 600_000;

/**
 * Runs the phases above on target `name`. Resolves the results, or `{skipped}` when the target
 * cannot run here (an old nats-server).
 * @param {string} name
 * @param {{fillMib: number, payloadKib: number, clients: number, probe: number,
 *   probeRounds: number, sample: number, phaseSecondsMax: number}} config
 */
export async function fillTarget(name, config) {
  const target = makeTarget(name, { plan: BACKLOG_PLAN });
  const unsupported = target.unsupported?.() ?? null;
  if (unsupported !== null) return { target: name, skipped: unsupported };
  const payloads = new Payloads(config.payloadKib * 1024);
  let connection = await target.start();
  const rss = new PeakRss(() => target.processes());
  try {
    await prepareQueue(connection, 'backlog');
    await prepareQueue(connection, 'probe');
    rss.phase = 'empty';
    const empty = await probeRounds(connection, config, payloads);
    rss.phase = 'fill';
    const fill = await fillBacklog(connection, config, payloads);
    rss.phase = 'full';
    const full = await probeRounds(connection, config, payloads);
    const diskAtFull = diskUse(target, fill.filledMib);
    rss.phase = 'from disk';
    const disk = await drain(connection, 'backlog', config.sample, config, payloads);
    const restarts = {};
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      rss.phase = `restart ${signal}`;
      const stopped = { ms: null };
      const startMs = performance.now();
      connection = (await target.restart(signal, () => (stopped.ms = performance.now()))) ?? connection;
      const first = await firstReceive(connection, payloads);
      restarts[signal] = {
        stopS: seconds(stopped.ms - startMs),
        readyS: seconds(performance.now() - stopped.ms),
        corrupt: first.corrupt,
      };
    }
    rss.phase = 'sample';
    const after = await drain(connection, 'backlog', config.sample, config, payloads);
    const out = {
      target: name, ...fill, empty, full, diskAtFull, fromDisk: disk, restarts,
      sampleAfterRestart: after,
      peakRssMib: rss.peaks(), peakRssPhase: rss.phases(),
    };
    printResult(out);
    return out;
  } finally {
    rss.stop();
    await target.stop();
  }
}

/**
 * One unmeasured probe round, then `probeRounds` measured ones: the median of each rate, and
 * every round's rates.
 */
async function probeRounds(connection, config, payloads) {
  await probe(connection, config, payloads);
  const rounds = [];
  for (let i = 0; i < config.probeRounds; i++) rounds.push(await probe(connection, config, payloads));
  const sendsPerS = median(rounds.map((r) => r.sendsPerS));
  return { sendsPerS, cyclesPerS: median(rounds.map((r) => r.cyclesPerS)), rounds };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : round((sorted[mid - 1] + sorted[mid]) / 2);
}

/** Sends `probe` messages on `probe`, then receives and acks as many: both rates. */
async function probe(connection, config, payloads) {
  const driver = await openDriver(connection, { clients: config.clients, queue: 'probe' });
  try {
    const payload = payloads.of(0);
    let next = 0;
    const startMs = performance.now();
    const deadlineMs = startMs + config.phaseSecondsMax * 1000;
    await Promise.all(driver.clients.map(async (client) => {
      while (next < config.probe && performance.now() < deadlineMs) {
        next++;
        await client.send(payload);
      }
    }));
    const sendsPerS = rate(next, performance.now() - startMs);
    const cycles = await drainWith(driver, config.probe, config.phaseSecondsMax, null);
    return { sendsPerS, cyclesPerS: cycles.perS };
  } finally {
    await driver.close();
  }
}

/** Sends `fillMib` MiB into `backlog` (or as much as `phaseSecondsMax` allows). */
async function fillBacklog(connection, config, payloads) {
  const driver = await openDriver(connection, { clients: config.clients, queue: 'backlog' });
  try {
    const count = Math.floor((config.fillMib * 1024 * 1024) / payloads.bytes);
    let next = 0;
    const startMs = performance.now();
    const deadlineMs = startMs + config.phaseSecondsMax * 1000;
    await Promise.all(driver.clients.map(async (client) => {
      while (next < count && performance.now() < deadlineMs) {
        await client.send(payloads.of(next++));
      }
    }));
    const elapsedMs = performance.now() - startMs;
    const filledMib = (next * payloads.bytes) / (1 << 20);
    return { messages: next, filledMib: round(filledMib), fillMibPerS: rate(filledMib, elapsedMs) };
  } finally {
    await driver.close();
  }
}

/**
 * Bytes under the target's data directory (every replica's, `du -sb`), and their ratio to the
 * payload bytes stored times the replicas (1.0: nothing but payloads, once per replica). Null
 * when the target has no data directory or du fails.
 */
function diskUse(target, filledMib) {
  const dir = target.dataDir?.();
  if (dir === undefined) return null;
  const du = spawnSync('du', ['-sb', dir], { encoding: 'utf8' });
  const bytes = Number.parseInt(du.stdout ?? '', 10);
  if (du.status !== 0 || !Number.isFinite(bytes)) return null;
  const replicas = target.processes().filter((p) => p.role !== 'gateway').length;
  const stored = filledMib * (1 << 20) * replicas;
  return { mib: round(bytes / (1 << 20)), perPayloadByte: stored === 0 ? null : round(bytes / stored) };
}

/** Receives and acks up to `count` messages of `queue`, checking each payload's bytes. */
async function drain(connection, queue, count, config, payloads) {
  const driver = await openDriver(connection, { clients: config.clients, queue });
  try {
    return await drainWith(driver, count, config.phaseSecondsMax, payloads);
  } finally {
    await driver.close();
  }
}

async function drainWith(driver, count, secondsMax, payloads) {
  let taken = 0;
  let done = 0;
  let corrupt = 0;
  const startMs = performance.now();
  let lastAckMs = startMs;
  const deadlineMs = startMs + secondsMax * 1000;
  await Promise.all(driver.clients.map(async (client) => {
    while (taken < count && performance.now() < deadlineMs) {
      taken++;
      const delivery = await client.receive(2_000);
      if (delivery === null) return;
      if (payloads !== null && !payloads.check(delivery.payload)) corrupt++;
      await delivery.ack();
      done++;
      lastAckMs = performance.now();
    }
  }));
  // Up to the last ack: a client whose receive found nothing (NATS pulls ahead per connection,
  // so one connection can hold what another waits for) would otherwise add its wait.
  return { count: done, corrupt, perS: rate(done, lastAckMs - startMs) };
}

/**
 * After a restart: retries a receive of `backlog` (the target may still be electing) until one
 * answers with a message, which is checked and acked. Rejects after READY_TIMEOUT_MS.
 */
async function firstReceive(connection, payloads) {
  const deadlineMs = performance.now() + READY_TIMEOUT_MS;
  let last = null;
  while (performance.now() < deadlineMs) {
    let driver = null;
    try {
      driver = await openDriver(connection, { clients: 1, queue: 'backlog' });
      const delivery = await driver.clients[0].receive(1_000);
      if (delivery !== null) {
        const corrupt = payloads.check(delivery.payload) ? 0 : 1;
        await delivery.ack();
        return { corrupt };
      }
    } catch (error) {
      last = error;
    } finally {
      await driver?.close().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no receive within ${READY_TIMEOUT_MS} ms after a restart (last: ${last})`);
}

/** Payloads of `bytes` bytes: a 4-byte index, then bytes from a random pool at its offset. */
class Payloads {
  constructor(bytes) {
    this.bytes = bytes;
    this.pool = randomBytes(Math.max(4 << 20, 2 * bytes));
  }

  of(n) {
    const out = Buffer.allocUnsafe(this.bytes);
    out.writeUInt32BE(n, 0);
    const from = (n * 65_537) % (this.pool.length - this.bytes);
    this.pool.copy(out, 4, from, from + this.bytes - 4);
    return out;
  }

  check(payload) {
    return payload.length === this.bytes && payload.equals(this.of(payload.readUInt32BE(0)));
  }
}

/**
 * The highest VmHWM seen per process role (a restarted process keeps its role's peak), and the
 * phase (set by the caller) in which it was first seen: read every 500 ms, so a peak is placed
 * within half a second.
 */
class PeakRss {
  constructor(processes) {
    this.processes = processes;
    this.phase = 'start';
    this.peakBytes = new Map();
    this.peakPhase = new Map();
    this.timer = setInterval(() => this.read(), 500);
  }

  read() {
    for (const { role, pid } of this.processes()) {
      const peak = processMemory(pid).rssPeakBytes;
      if (peak === undefined || peak <= (this.peakBytes.get(role) ?? 0)) continue;
      this.peakBytes.set(role, peak);
      this.peakPhase.set(role, this.phase);
    }
  }

  phases() {
    return Object.fromEntries(this.peakPhase);
  }

  peaks() {
    this.read();
    return Object.fromEntries([...this.peakBytes].map(([role, b]) => [role, round(b / (1 << 20))]));
  }

  stop() {
    clearInterval(this.timer);
  }
}

function printResult(r) {
  const rssMax = Math.max(...Object.values(r.peakRssMib));
  printTable(
    ['target', 'fill MiB', 'fill MiB/s', 'sends/s empty', 'sends/s full', 'recv+ack/s empty', 'recv+ack/s full', 'recv+ack/s from disk', 'peak RSS MiB (max process)', 'disk MiB at full (x payload)', 'TERM: exit s', 'TERM: start to ready s', 'KILL: start to ready s', 'corrupt'],
    [[r.target, r.filledMib, r.fillMibPerS, r.empty.sendsPerS, r.full.sendsPerS, r.empty.cyclesPerS, r.full.cyclesPerS, r.fromDisk.perS, rssMax, diskText(r.diskAtFull), r.restarts.SIGTERM.stopS, r.restarts.SIGTERM.readyS, r.restarts.SIGKILL.readyS, `${r.fromDisk.corrupt + r.sampleAfterRestart.corrupt + r.restarts.SIGTERM.corrupt + r.restarts.SIGKILL.corrupt}/${r.fromDisk.count + r.sampleAfterRestart.count + 2}`]],
  );
}

const diskText = (d) => (d === null ? '-' : `${d.mib} (${d.perPayloadByte})`);
const rate = (count, ms) => round(count / (ms / 1000));
const seconds = (ms) => round(ms / 1000);
const round = (value) => Math.round(value * 100) / 100;
