#!/usr/bin/env node
// Backlog benchmark (issue 13): a backlog bounded by the disk, not by memory. Two parts:
//   1. heap: in a child process (node --expose-gc), one spool engine over the on-disk segment
//      store takes --messages sends of --small-payload bytes; prints heap bytes per stored
//      message (after a full GC), the store's size, the metadata-only snapshot's size and encode
//      and decode times (a restart costs the decode, not the payload bytes), and checks a sample
//      of payloads read back from disk byte for byte.
//   2. fill (backlog-fill.mjs): each of --targets (mq serve, the three-member cluster, NATS
//      JetStream R1 and R3 on file storage) as processes, filled with incompressible
//      --payload-kib messages (--fill-mib for the single-node targets, --cluster-fill-mib for the
//      three-node ones) by --clients senders: fill MiB/s; send and receive+ack rates with an
//      empty and a full backlog; each process's peak RSS (VmHWM); restart-to-ready after SIGTERM
//      and after SIGKILL of every process; payloads checked byte for byte before and after.
//      Then the targets for mq, each `met` or `NOT met`.
// The full sizes are `--fill-mib 20480 --cluster-fill-mib 8192` (about an hour here);
// the defaults are scaled down.
// Flags: --part heap|fill|all (default all) --messages 1000000 --small-payload 128
//   --targets mq-serve,mq-cluster,nats-r1,nats-r3 --fill-mib 768 --cluster-fill-mib 512
//   --payload-kib 64 --clients 16 --probe 500 --probe-rounds 3 --sample 200
//   --phase-seconds-max 1800
// Prints tables and writes bench-results/backlog.json.
import { spawnSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fillTarget } from './backlog-fill.mjs';
import { REPO_ROOT, machineInfo, machineLine, printTable, writeResults } from './lib/index.mjs';

const HEAP_CHILD = fileURLToPath(new URL('./backlog-heap.mjs', import.meta.url));
const DEFAULT_TARGETS = 'mq-serve,mq-cluster,nats-r1,nats-r3';

export async function run({ flags = {} } = {}) {
  const config = {
    part: flags.part ?? 'all',
    messages: intFlag(flags, 'messages', 1_000_000, 1, 20_000_000),
    smallPayload: intFlag(flags, 'small-payload', 128, 1, 65_536),
    fillMib: intFlag(flags, 'fill-mib', 768, 1, 1_000_000),
    payloadKib: intFlag(flags, 'payload-kib', 64, 1, 1024),
    clients: intFlag(flags, 'clients', 16, 1, 256),
    probe: intFlag(flags, 'probe', 500, 1, 100_000),
    probeRounds: intFlag(flags, 'probe-rounds', 3, 1, 99),
    sample: intFlag(flags, 'sample', 200, 1, 100_000),
    clusterFillMib: intFlag(flags, 'cluster-fill-mib', 512, 1, 1_000_000),
    phaseSecondsMax: intFlag(flags, 'phase-seconds-max', 1800, 1, 86_400),
    targets: (flags.targets ?? DEFAULT_TARGETS).split(','),
  };
  const machine = machineInfo();
  const command = ['npm run bench -- backlog', ...process.argv.slice(3)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n\n`);
  const results = { machine, command, startedAt: new Date().toISOString(), config };
  if (config.part === 'all' || config.part === 'heap') results.heap = heapPart(config);
  if (config.part === 'all' || config.part === 'fill') results.fill = await fillPart(config);
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

// ---- part 2: backlogs in mq and NATS ---------------------------------------------------------

async function fillPart(config) {
  const out = [];
  for (const name of config.targets) {
    const single = name === 'mq-serve' || name.startsWith('nats-r1');
    const fillMib = single ? config.fillMib : config.clusterFillMib;
    process.stdout.write(`\n-- ${name}: ${fillMib} MiB of ${config.payloadKib} KiB messages\n`);
    out.push(await fillTarget(name, { ...config, fillMib }));
  }
  printVerdicts(out);
  return out;
}

/** The targets for mq: peak RSS, rates at a full backlog, ready after a restart. */
function printVerdicts(results) {
  const rows = results.filter((r) => r.skipped === undefined && r.target.startsWith('mq-'));
  for (const r of rows) {
    const rssMax = Math.max(...Object.entries(r.peakRssMib).filter(([role]) => role !== 'gateway').map(([, v]) => v));
    const checks = [
      [`member peak RSS ${rssMax} MiB <= 512 (${rssWhere(r, rssMax)})`, rssMax <= 512],
      [`sends full/empty ${ratio(r.full.sendsPerS, r.empty.sendsPerS)} >= 0.8`, r.full.sendsPerS >= 0.8 * r.empty.sendsPerS],
      [`recv+ack full/empty ${ratio(r.full.cyclesPerS, r.empty.cyclesPerS)} >= 0.8`, r.full.cyclesPerS >= 0.8 * r.empty.cyclesPerS],
      [`ready after SIGTERM ${r.restarts.SIGTERM.readyS} s <= 10`, r.restarts.SIGTERM.readyS <= 10],
      [`ready after SIGKILL ${r.restarts.SIGKILL.readyS} s <= 10`, r.restarts.SIGKILL.readyS <= 10],
      [`payloads corrupt or wrong: ${corruptOf(r)}`, corruptOf(r) === 0],
    ];
    for (const [text, ok] of checks) process.stdout.write(`${r.target}: ${ok ? 'met' : 'NOT met'}: ${text}\n`);
  }
}

/** Which member had the peak, and in which phase. */
function rssWhere(r, rssMax) {
  const role = Object.keys(r.peakRssMib).find((key) => r.peakRssMib[key] === rssMax);
  return `${role}, during ${r.peakRssPhase?.[role] ?? '?'}`;
}

/** Payloads read back that were not the bytes sent, over every checked read of the run. */
function corruptOf(r) {
  const { fromDisk, sampleAfterRestart, restarts } = r;
  return fromDisk.corrupt + sampleAfterRestart.corrupt + restarts.SIGTERM.corrupt +
    restarts.SIGKILL.corrupt;
}

function ratio(a, b) {
  return round(a / b);
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
