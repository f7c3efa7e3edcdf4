#!/usr/bin/env node
// `npm run bench -- compare [--quick] [--targets a,b] [--payloads 128,16384] [--cpu-prof]
//   [--out NAME] [--render]`
// Runs mq (local, serve, 3-member cluster) and its peers (NATS JetStream R1/R3, default sync and
// sync_interval: always; beanstalkd with a binlog fsynced on every write) one after another on
// this machine, under the same workloads, from a separate load-generator process:
//   send      closed loop at concurrency 1, 16, 256; sends/s and latency
//   drain     receive + ack of a backlog (50,000), cycles/s
//   pipeline  producers at a fixed offered rate, consumers receive + ack; send->ack latency
//   curve     the same, offered rate doubling each step until the knee (p99 > 10x the
//             lowest before it (at least 5 ms), errors, or unacked messages; a knee step is
//             run twice and counts only if it fails both times) or the rate cap
// each with 128 B and 16 KiB payloads. Also per process: CPU seconds per 1,000 messages and
// resident memory; for mq members, fsyncs/s, entries and bytes per fsync and mean fsync latency
// from their /metrics (mq_member_storage_*). Every NATS target runs one nats-server binary,
// 2.10 or later when one can be had (peers/nats-binary.mjs: Debian's newer package when the
// installed one predates sync_interval); its version is recorded per target.
// Prints tables, writes bench-results/compare.{json,svg,md} (a full run; --quick writes
// compare-quick.*, a run limited by --targets/--payloads/--cpu-prof compare-subset.*, --out NAME
// NAME.*). --render rewrites the SVG and Markdown from the JSON without running anything.
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
import { renderChart } from './chart.mjs';
import { REPO_ROOT, machineInfo, machineLine, printTable, processCpuMs, spawnTracked, stopChild, writeResults } from './lib/index.mjs';
import { resolveNatsServer } from './peers/nats-binary.mjs';
import { ensureInstalled, processMemory } from './peers/support.mjs';
import { TARGET_NAMES, makeTarget } from './peers/targets.mjs';

const LOADGEN = fileURLToPath(new URL('./workloads/loadgen.mjs', import.meta.url));

/** Workload sizes; every phase is bounded by its count and its seconds. */
const FULL = {
  payloads: [128, 16_384],
  send: [
    { clients: 1, count: 3_000, seconds: 3 },
    { clients: 16, count: 30_000, seconds: 3 },
    { clients: 256, count: 50_000, seconds: 6 },
  ],
  warmup: { count: 3_000, seconds: 3 },
  backlog: 50_000,
  fillSeconds: 10,
  drain: { clients: 256, seconds: 10 },
  pipeline: { rateByPayload: { 128: 1_000, 16_384: 500 }, seconds: 6, producers: 64, consumers: 32, settleMs: 3_000 },
  curve: { startPerS: 250, factor: 2, capPerS: 16_000, stepSeconds: 1.5, settleMs: 2_000, producers: 64, consumers: 32 },
};
const QUICK = {
  payloads: [128, 16_384],
  send: [
    { clients: 1, count: 200, seconds: 0.5 },
    { clients: 16, count: 2_000, seconds: 0.75 },
    { clients: 256, count: 3_000, seconds: 1 },
  ],
  warmup: { count: 300, seconds: 0.5 },
  backlog: 3_000,
  fillSeconds: 1,
  drain: { clients: 256, seconds: 1.5 },
  pipeline: { rateByPayload: { 128: 300, 16_384: 200 }, seconds: 0.75, producers: 16, consumers: 16, settleMs: 500 },
  curve: { startPerS: 250, factor: 4, capPerS: 1_000, stepSeconds: 0.75, settleMs: 500, producers: 32, consumers: 16 },
};
/** The knee: p99 above this multiple of the lowest p99 of the steps before it. */
const KNEE_P99_FACTOR = 10;
/**
 * Floor of that reference p99 (ms): a sub-millisecond p99 times 10 is within the scheduling noise
 * of two shared cores, which would call a knee where there is none.
 */
const KNEE_BASE_P99_FLOOR_MS = 5;

export async function run({ flags = {} } = {}) {
  if (flags.render === true) return rerender(flags);
  const quick = flags.quick === true;
  const config = structuredClone(quick ? QUICK : FULL);
  if (typeof flags.payloads === 'string') config.payloads = flags.payloads.split(',').map(Number);
  const names = typeof flags.targets === 'string' ? flags.targets.split(',') : TARGET_NAMES;
  const cpuProfDir = flags['cpu-prof'] === true ? `${REPO_ROOT}bench-results/prof` : undefined;
  // The cluster's links are mutual TLS as deployed; --insecure-cluster measures them without.
  const insecureCluster = flags['insecure-cluster'] === true;
  const machine = machineInfo();
  const command = `npm run bench -- compare${quick ? ' --quick' : ''}${insecureCluster ? ' --insecure-cluster' : ''}${names === TARGET_NAMES ? '' : ` --targets ${names.join(',')}`}`;
  const startedAt = new Date().toISOString();
  const runStartMs = Date.now();
  const log = (line) => process.stdout.write(`${line}\n`);
  log(`${machineLine(machine)}\ncommand: ${command}`);

  const peers = {};
  if (names.some((n) => n.startsWith('nats-'))) {
    const nats = resolveNatsServer(log);
    Object.assign(peers, { natsServer: nats.version, natsServerPath: nats.path, natsServerSource: nats.source, natsSyncAlways: nats.syncAlways });
    log(`nats-server: ${nats.version} (${nats.source}), for every NATS target`);
    if (!nats.syncAlways.supported) {
      log(`NOTE: no nats-server accepting 'jetstream { sync_interval: always }' (2.10+) could be had: ${nats.syncAlways.detail}\n` +
        `      the sync-always NATS targets are skipped; NATS runs with its default syncing only.`);
    }
  }
  if (names.includes('beanstalkd')) {
    ensureInstalled('beanstalkd', 'beanstalkd', log);
    peers.beanstalkd = 'beanstalkd (Debian package)';
  }

  const loadgen = new Loadgen();
  const results = [];
  try {
    for (const name of names) {
      const target = makeTarget(name, { cpuProfDir, insecureCluster });
      const unsupported = target.unsupported?.() ?? null;
      const peer = target.describe?.();
      if (unsupported !== null) {
        log(`-- ${name}: skipped: ${unsupported}`);
        results.push({ target: name, durability: target.durability, ...(peer === undefined ? {} : { peer }), skipped: unsupported });
        continue;
      }
      log(`-- ${name} (${target.durability}${peer === undefined ? '' : `; ${peer.server}`})`);
      const entry = { target: name, family: target.family, durability: target.durability, ...(peer === undefined ? {} : { peer }), payloads: [] };
      results.push(entry);
      try {
        const connection = await startWarm(target, loadgen, config, entry, log);
        for (const payloadBytes of config.payloads) {
          entry.payloads.push(await runPayload({ target, connection, loadgen, config, payloadBytes, log }));
        }
      } catch (error) {
        entry.error = String(error?.message ?? error);
        log(`   FAILED: ${entry.error}`);
      } finally {
        entry.memory = memoryOf(target);
        await target.stop();
      }
    }
  } finally {
    await loadgen.close();
  }
  const wallSeconds = Math.round((Date.now() - runStartMs) / 1000);
  const ratios = computeRatios(results);
  printReport({ results, ratios, log });
  log(`load average (1 min): ${machine.loadAvg1m} at start, ${os.loadavg()[0].toFixed(2)} at end; wall time ${wallSeconds} s`);
  const data = { benchmark: 'compare', startedAt, command, machine, wallSeconds, quick, config, peers, results, ratios };
  // Only a full run replaces compare.* (what the README shows); smoke and partial runs get
  // their own names unless --out says otherwise.
  const subset = names !== TARGET_NAMES || typeof flags.payloads === 'string' || cpuProfDir !== undefined;
  const outName = typeof flags.out === 'string' ? flags.out : quick ? 'compare-quick' : subset ? 'compare-subset' : 'compare';
  const jsonPath = writeResults(outName, data);
  const svgPath = `${REPO_ROOT}bench-results/${outName}.svg`;
  writeFileSync(svgPath, renderChart(data));
  const mdPath = `${REPO_ROOT}bench-results/${outName}.md`;
  writeFileSync(mdPath, markdownReport(data));
  log(`wrote ${jsonPath}\nwrote ${svgPath}\nwrote ${mdPath}${outName === 'compare' ? " (the full table docs/internals.md links to)" : ''}`);
}

/**
 * Starts `target` and warms it up. A start that fails (a peer cluster that formed short of a
 * member, a port taken between allocation and bind by another process) is stopped and tried
 * once more from scratch; the first error is kept in the entry as `firstStartError`.
 */
async function startWarm(target, loadgen, config, entry, log) {
  try {
    const connection = await target.start();
    await warmUp(loadgen, connection, config.warmup);
    return connection;
  } catch (error) {
    entry.firstStartError = String(error?.message ?? error);
    log(`   start failed (${entry.firstStartError}); stopping it and starting once more`);
    await target.stop();
  }
  const connection = await target.start();
  await warmUp(loadgen, connection, config.warmup);
  return connection;
}

/** `--render`: rewrites compare.svg and compare.md from the last compare.json, running nothing. */
function rerender(flags) {
  const name = typeof flags.out === 'string' ? flags.out : 'compare';
  const data = JSON.parse(readFileSync(`${REPO_ROOT}bench-results/${name}.json`, 'utf8'));
  writeFileSync(`${REPO_ROOT}bench-results/${name}.svg`, renderChart(data));
  writeFileSync(`${REPO_ROOT}bench-results/${name}.md`, markdownReport(data));
  process.stdout.write(`rewrote bench-results/${name}.svg and ${name}.md from ${name}.json\n`);
}

/** Unreported sends and receives first, so JIT-compiled servers (and the driver) are warm. */
async function warmUp(loadgen, connection, { count, seconds }) {
  const queue = 'warmup';
  await loadgen.call('send', { connection, queue, clients: 16, payloadBytes: 128, count, seconds });
  await loadgen.call('drain', { connection, queue, clients: 16, count, seconds });
}

// ---- one target, one payload size -------------------------------------------------------------

async function runPayload({ target, connection, loadgen, config, payloadBytes, log }) {
  const tag = payloadBytes >= 1024 ? `${payloadBytes / 1024}k` : String(payloadBytes);
  const phase = (name, op, args) => measured(target, loadgen, name, op, { connection, payloadBytes, ...args });
  const out = { payloadBytes, phases: [] };
  const say = (p, note = '') => log(`   ${tag.padStart(4)} ${p.name.padEnd(22)} ${String(p.opsPerS).padStart(7)}/s  p99 ${p.latencyMs.p99} ms  errors ${p.errorCount}${note}`);
  const backlogQueue = `drain-${tag}`;
  for (const send of config.send) {
    const last = send.clients === config.send[config.send.length - 1].clients;
    const queue = last ? backlogQueue : `send${send.clients}-${tag}`;
    const p = await phase(`send c${send.clients}`, 'send', { queue, clients: send.clients, count: send.count, seconds: send.seconds });
    out.phases.push(p);
    say(p);
  }
  const inBacklog = out.phases[out.phases.length - 1].ops;
  let backlog = inBacklog;
  if (inBacklog < config.backlog) {
    const fill = await phase('fill backlog', 'send', {
      queue: backlogQueue,
      clients: 256,
      count: config.backlog - inBacklog,
      seconds: config.fillSeconds,
      prepare: false,
    });
    backlog += fill.ops;
  }
  const drain = await phase(`drain ${backlog}`, 'drain', { queue: backlogQueue, clients: config.drain.clients, count: backlog, seconds: config.drain.seconds });
  drain.backlog = backlog;
  out.phases.push(drain);
  say(drain);
  const pl = config.pipeline;
  const rate = pl.rateByPayload[payloadBytes] ?? pl.rateByPayload[128];
  const pipeline = await phase(`pipeline ${rate}/s`, 'openLoop', {
    queue: `pipe-${tag}`, rate, seconds: pl.seconds, producers: pl.producers, consumers: pl.consumers, settleMs: pl.settleMs,
  });
  out.phases.push(pipeline);
  say(pipeline);
  out.curve = await runCurve({ phase, config: config.curve, tag, say });
  return out;
}

/** Steps the offered rate up until the knee or the cap; returns the steps and the knee. */
async function runCurve({ phase, config, tag, say }) {
  const steps = [];
  let knee = null;
  let baseP99 = null;
  for (let rate = config.startPerS, i = 0; rate <= config.capPerS && i < 32; rate *= config.factor, i += 1) {
    let step = await phase(`curve ${rate}/s`, 'openLoop', {
      queue: `curve${i}-${tag}`, rate, seconds: config.stepSeconds, producers: config.producers, consumers: config.consumers, settleMs: config.settleMs,
    });
    let why = kneeReason(step, baseP99);
    if (why !== null && steps.length > 0) {
      // The cores are shared: one stall can fake a knee. A knee counts only if the same rate
      // fails again; the repeat's result is the one kept.
      say(step, ' (knee? repeating the step)');
      step = await phase(`curve ${rate}/s`, 'openLoop', {
        queue: `curve${i}r-${tag}`, rate, seconds: config.stepSeconds, producers: config.producers, consumers: config.consumers, settleMs: config.settleMs,
      });
      why = kneeReason(step, baseP99);
    }
    steps.push(step);
    say(step);
    // The reference is the lowest p99 so far, so one noisy early step cannot hide the knee.
    if (why === null) baseP99 = baseP99 === null ? step.latencyMs.p99 : Math.min(baseP99, step.latencyMs.p99);
    if (why !== null) {
      knee = { offeredPerS: rate, reason: why };
      break;
    }
  }
  const sustained = knee === null ? steps : steps.slice(0, -1);
  return { steps, knee, maxSustainedPerS: sustained.length === 0 ? null : sustained[sustained.length - 1].offeredPerS };
}

function kneeReason(step, baseP99) {
  if (step.errorCount > 0) return `errors (${Object.keys(step.errors).join('; ')})`;
  if (step.late > 0) return `${step.late} messages not acked within the settle time`;
  if (step.latencyMs.p99 === null) return 'no messages acked';
  const limitMs = KNEE_P99_FACTOR * Math.max(baseP99 ?? 0, KNEE_BASE_P99_FLOOR_MS);
  if (baseP99 !== null && step.latencyMs.p99 > limitMs) return `p99 ${step.latencyMs.p99} ms > ${KNEE_P99_FACTOR}x max(lowest earlier p99 ${baseP99} ms, ${KNEE_BASE_P99_FLOOR_MS} ms)`;
  return null;
}

/**
 * Runs one phase in the load generator and adds what the servers spent on it: CPU ms per
 * process, CPU seconds per 1,000 messages per process, resident memory, and for mq members the
 * fsyncs/s and mean entries per fsync from /metrics (null when not exported).
 */
async function measured(target, loadgen, name, op, args) {
  const procs = [...target.processes(), { role: 'loadgen', pid: loadgen.pid }];
  const cpuBefore = procs.map((p) => processCpuMs(p.pid));
  const storageBefore = await target.metrics();
  const t0 = performance.now();
  const result = await loadgen.call(op, args);
  const elapsedS = (performance.now() - t0) / 1000;
  const storageAfter = await target.metrics();
  const perProcess = procs.map((p, i) => {
    const after = processCpuMs(p.pid);
    const cpuMs = after === undefined || cpuBefore[i] === undefined ? null : after - cpuBefore[i];
    return {
      role: p.role,
      cpuMs,
      cpuSecondsPer1kMsgs: cpuMs === null || result.ops === 0 ? null : Number((cpuMs / result.ops).toFixed(4)),
      rssBytes: processMemory(p.pid).rssBytes ?? null,
    };
  });
  return { name, ...result, processes: perProcess, storage: storageRates(storageBefore, storageAfter, elapsedS) };
}

function storageRates(before, after, elapsedS) {
  if (before === null || after === null) return null;
  const out = {};
  for (const [member, a] of Object.entries(after)) {
    const b = before[member];
    if (b === undefined || a.fsyncs === null || b.fsyncs === null) {
      out[member] = { fsyncsPerS: null, entriesPerFsync: null, note: 'mq_member_storage_fsyncs_total not on /metrics' };
      continue;
    }
    const fsyncs = a.fsyncs - b.fsyncs;
    const delta = (key) => (a[key] === null || b[key] === null ? null : a[key] - b[key]);
    const perFsync = (value, digits) => (value === null || fsyncs === 0 ? null : Number((value / fsyncs).toFixed(digits)));
    const fsyncSeconds = delta('fsyncSeconds');
    out[member] = {
      fsyncs,
      fsyncsPerS: Math.round(fsyncs / elapsedS),
      entriesPerFsync: perFsync(delta('entriesWritten'), 2),
      bytesPerFsync: perFsync(delta('bytesWritten'), 0),
      meanFsyncMs: fsyncSeconds === null || fsyncs === 0 ? null : Number(((fsyncSeconds * 1000) / fsyncs).toFixed(3)),
    };
  }
  return out;
}

function memoryOf(target) {
  try {
    return target.processes().map((p) => ({ role: p.role, ...processMemory(p.pid) }));
  } catch {
    return [];
  }
}

// ---- load generator process -------------------------------------------------------------------

class Loadgen {
  constructor() {
    this.child = spawnTracked(process.execPath, [LOADGEN], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.pid = this.child.pid;
    this.nextId = 1;
    this.pending = new Map();
    this.child.on('message', ({ id, result, error }) => {
      const p = this.pending.get(id);
      this.pending.delete(id);
      if (error !== undefined) p?.reject(new Error(error));
      else p?.resolve(result);
    });
    this.child.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  /** Runs phase `op` in the child; rejects if it fails or the child dies. */
  call(op, args) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, op, args });
    });
  }

  async close() {
    if (this.child.connected) this.child.disconnect();
    await stopChild(this.child, 2_000);
  }
}

// ---- report -----------------------------------------------------------------------------------

/** Looks a phase up: results -> target -> payload -> phase name prefix. */
export function phaseOf(results, target, payloadBytes, prefix) {
  const entry = results.find((r) => r.target === target);
  const payload = entry?.payloads?.find((p) => p.payloadBytes === payloadBytes);
  return payload?.phases.find((p) => p.name === prefix || p.name.startsWith(`${prefix} `)) ?? null;
}

/**
 * The issues' bars, at 128 B: cluster c256 sends/s >= 5x NATS R3 (sync always; issue 13 raised
 * it from 3x), cluster cycles/s >= NATS R3; serve c256 sends/s >= 3x NATS R1 (sync always); and
 * (issue 13) the peak RSS of mq-serve and of mq-cluster (all its processes) at most 2x that of
 * the same NATS target. When the sync-always target could not run, the ratio is taken against
 * the default-sync one and says so.
 */
function computeRatios(results) {
  const ran = (name) => results.some((r) => r.target === name && r.skipped === undefined && r.error === undefined);
  const peer = (r) => (ran(`${r}-sync-always`) ? `${r}-sync-always` : ran(r) ? r : null);
  const ratio = (mine, theirs, prefix, needed) => {
    const a = phaseOf(results, mine, 128, prefix);
    const b = theirs === null ? null : phaseOf(results, theirs, 128, prefix);
    if (a === null || b === null || b.opsPerS === 0) return { mine, theirs, metric: prefix, ratio: null, needed, met: null };
    const value = Number((a.opsPerS / b.opsPerS).toFixed(2));
    return { mine, theirs, metric: prefix, mineOpsPerS: a.opsPerS, theirsOpsPerS: b.opsPerS, ratio: value, needed, met: value >= needed, peerSyncAlways: theirs.endsWith('sync-always') };
  };
  return [
    ratio('mq-cluster', peer('nats-r3'), 'send c256', 5),
    ratio('mq-cluster', peer('nats-r3'), 'drain', 1),
    ratio('mq-serve', peer('nats-r1'), 'send c256', 3),
    rssRatio(results, 'mq-serve', peer('nats-r1')),
    rssRatio(results, 'mq-cluster', peer('nats-r3')),
  ];
}

/** Peak RSS of every process of a target, summed, in bytes (0 when not measured). */
function peakRssBytes(results, target) {
  const entry = results.find((r) => r.target === target);
  return (entry?.memory ?? []).reduce((sum, x) => sum + (x.rssPeakBytes ?? 0), 0);
}

/** mine's peak RSS over theirs': the bar is at most 2x. */
function rssRatio(results, mine, theirs) {
  const metric = 'peak rss';
  const a = peakRssBytes(results, mine);
  const b = theirs === null ? 0 : peakRssBytes(results, theirs);
  if (a === 0 || b === 0) return { mine, theirs, metric, ratio: null, needed: 2, met: null, atMost: true };
  const mib = (bytes) => Math.round(bytes / 1_048_576);
  const value = Number((a / b).toFixed(2));
  return {
    mine, theirs, metric, mineOpsPerS: mib(a), theirsOpsPerS: mib(b), unit: 'MiB', ratio: value,
    needed: 2, met: value <= 2, atMost: true, peerSyncAlways: theirs.endsWith('sync-always'),
  };
}

/** How a ratio's bar reads: ">= 5x" for a rate, "<= 2x" for memory. */
function barText(r) {
  return `${r.atMost ? '<=' : '>='} ${r.needed}x`;
}

/** The summary table rows (also used for the README section). */
export function summaryRows(results) {
  const rows = [];
  for (const r of results) {
    if (r.skipped !== undefined || r.payloads === undefined || r.payloads.length === 0) {
      const why = r.skipped ? `skipped: ${r.skipped}` : r.error ?? 'no data';
      rows.push([r.target, '-', '-', '-', '-', '-', '-', '-', '-', '-', shortNote(why)]);
      continue;
    }
    for (const p of r.payloads) {
      const get = (prefix) => p.phases.find((x) => x.name === prefix || x.name.startsWith(`${prefix} `));
      const c256 = get('send c256');
      const pipe = get('pipeline');
      const cpu = c256?.processes.filter((x) => x.role !== 'loadgen').reduce((s, x) => s + (x.cpuSecondsPer1kMsgs ?? 0), 0);
      const rss = (r.memory ?? []).reduce((s, x) => s + (x.rssPeakBytes ?? 0), 0);
      rows.push([
        r.target,
        p.payloadBytes >= 1024 ? `${p.payloadBytes / 1024} KiB` : `${p.payloadBytes} B`,
        get('send c1')?.opsPerS ?? '-',
        get('send c16')?.opsPerS ?? '-',
        c256?.opsPerS ?? '-',
        get('drain')?.opsPerS ?? '-',
        pipe === undefined ? '-' : `${pipe.latencyMs.p50}/${pipe.latencyMs.p99}/${pipe.latencyMs.p999}`,
        p.curve?.maxSustainedPerS ?? '-',
        cpu === undefined ? '-' : Number(cpu.toFixed(3)),
        rss === 0 ? '-' : Math.round(rss / 1_048_576),
        r.error === undefined ? r.peer?.server ?? '' : shortNote(`ERROR: ${r.error}`),
      ]);
    }
  }
  return rows;
}

export const SUMMARY_HEADERS = [
  'target', 'payload', 'send c1/s', 'send c16/s', 'send c256/s', 'recv+ack/s', 'pipeline p50/p99/p99.9 ms',
  'knee (max ok rate/s)', 'cpu s/1k msgs', 'peak rss MB', 'note',
];

/**
 * mq storage per member, from the members' /metrics (mq_member_storage_*), for the phases that
 * write the most: send c256 and drain.
 */
export function storageRows(results) {
  const rows = [];
  for (const r of results) {
    for (const p of r.payloads ?? []) {
      for (const ph of p.phases) {
        if (ph.storage === null || ph.storage === undefined) continue;
        if (!ph.name.startsWith('send c256') && !ph.name.startsWith('drain')) continue;
        for (const [member, s] of Object.entries(ph.storage)) {
          rows.push([
            r.target,
            p.payloadBytes >= 1024 ? `${p.payloadBytes / 1024} KiB` : `${p.payloadBytes} B`,
            ph.name,
            member,
            s.fsyncsPerS ?? '-',
            s.entriesPerFsync ?? '-',
            s.bytesPerFsync ?? '-',
            s.meanFsyncMs ?? '-',
            s.note ?? '',
          ]);
        }
      }
    }
  }
  return rows;
}

export const STORAGE_HEADERS = ['target', 'payload', 'phase', 'member', 'fsyncs/s', 'entries/fsync', 'bytes/fsync', 'mean fsync ms', 'note'];

/** Notes are kept to one short line in the table; compare.json has them whole. */
function shortNote(text) {
  const line = String(text).split('\n')[0];
  return line.length > 70 ? `${line.slice(0, 67)}...` : line;
}

/** The summary as Markdown: machine, command, table, ratios (pasted into the README). */
export function markdownReport(data) {
  const cell = (v) => (typeof v === 'number' ? (Number.isInteger(v) ? v.toLocaleString('en-US') : String(v)) : String(v).replace(/\|/g, '\\|'));
  const rows = summaryRows(data.results);
  const table = (headers, body) => [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...body.map((row) => `| ${row.map(cell).join(' | ')} |`)];
  const peers = [
    data.peers.natsServer === undefined ? null : `nats-server ${data.peers.natsServer}${data.peers.natsServerSource === undefined ? '' : ` (${data.peers.natsServerSource})`}`,
    data.peers.beanstalkd === undefined ? null : 'Debian beanstalkd',
  ].filter((x) => x !== null);
  const lines = [
    `Machine: ${data.machine.cpuModel}, ${data.machine.cores} cores, ${Math.round(data.machine.totalMemBytes / 2 ** 30)} GiB, node ${data.machine.node}, ` +
      `load ${data.machine.loadAvg1m} at start. Command: \`${data.command}\` (${data.startedAt}, ${data.wallSeconds} s).${peers.length === 0 ? '' : ` Peers: ${peers.join(', ')}.`}`,
    '',
    ...table(SUMMARY_HEADERS, rows),
    '',
  ];
  const storage = storageRows(data.results);
  if (storage.length > 0) {
    lines.push('mq storage per member (from each member\'s `/metrics`, `mq_member_storage_*`):', '', ...table(STORAGE_HEADERS, storage), '');
  }
  for (const r of data.ratios) {
    if (r.ratio === null) lines.push(`- ${r.mine} / ${r.theirs ?? 'peer (did not run)'}, ${r.metric}: not measured`);
    else lines.push(`- ${r.mine} / ${r.theirs}, ${r.metric}${r.atMost ? ' (MiB, whole run)' : ' at 128 B'}: ${r.mineOpsPerS} / ${r.theirsOpsPerS} = **${r.ratio}x** (bar: ${barText(r)}, ${r.met ? 'met' : 'not met'})${r.peerSyncAlways ? '' : '; the peer ran with its default syncing, not `sync_interval: always`'}`);
  }
  return `${lines.join('\n')}\n`;
}

function printReport({ results, ratios, log }) {
  log('');
  printTable(SUMMARY_HEADERS, summaryRows(results));
  log('recv+ack/s: receive + ack cycles/s draining the backlog; pipeline: offered rate as in the JSON, latency from scheduled send to ack;');
  log('knee: highest offered rate before p99 > 10x max(lowest earlier p99, 5 ms), errors or unacked messages (seen twice); cpu: all server processes, send c256.');
  const storage = storageRows(results);
  if (storage.length > 0) {
    log('mq storage per member (from /metrics, mq_member_storage_*):');
    printTable(STORAGE_HEADERS, storage);
  }
  for (const r of ratios) {
    if (r.ratio === null) log(`ratio ${r.mine} / ${r.theirs ?? 'peer (did not run)'} ${r.metric}: n/a`);
    else {
      const caveat = r.peerSyncAlways ? '' : ' [peer ran with DEFAULT sync, not sync_interval: always]';
      const where = r.atMost ? ' MiB' : ' @128 B';
      log(`ratio ${r.mine} / ${r.theirs} ${r.metric}${where}: ${r.mineOpsPerS} / ${r.theirsOpsPerS} = ${r.ratio}x (target ${barText(r)}: ${r.met ? 'met' : 'NOT met'})${caveat}`);
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flags = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 1) {
    const key = argv[i].replace(/^--/, '');
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[key] = argv[++i];
    else flags[key] = true;
  }
  run({ flags }).then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`bench compare failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
