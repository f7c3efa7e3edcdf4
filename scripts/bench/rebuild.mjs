#!/usr/bin/env node
// Rebuild benchmark (issue 13, "messages on disk": a wiped member's rebuild). The three-member
// cluster as processes (peers/mq-targets.mjs, gRPC with mutual TLS on loopback) is filled with
// --fill-mib MiB of incompressible --payload-kib KiB messages by --clients senders; then member
// --wipe is SIGKILLed, its data directory deleted, and it is started again on an empty one. It
// installs a snapshot (metadata only: the fill is far past a snapshot's 64 MiB log trigger) and
// fetches the payloads it lacks from the others (packages/member/src/cluster/payload-fetch.ts).
// Its /metrics is polled every POLL_MS until every spool group it hosts has applied what the
// others committed and lacks no payload. Prints:
//   rebuild s        from the restart until then
//   fetch s          from the first poll that saw payloads missing until none were
//   fetched          payloads fetched (mq_member_spool_payloads_fetched_total) and their MiB
//   fetch MiB/s      fetched MiB / fetch s
//   lag              per member, the event-loop lag histogram (mq_process_event_loop_lag_seconds,
//                    a probe every 20 ms) over the rebuild: probes later than 50 ms and the
//                    bucket of the latest one (its upper bound); and the same of its GC pauses
//                    (mq_process_gc_pause_seconds), which stall the loop as well
//   elections        spool term increases seen on the members that were not wiped (one is the
//                    wipe's own when the wiped member was the primary)
//   primary          which members served the spool (mq_member_spool_serving) before the wipe
//                    and after the rebuild
// With --proxy-delay-ms D the members reach one another through the chaos harness's TCP proxies
// (in this process), which hold each chunk D ms each way, as a chaos run's `delay` episodes do
// (its proxies alone, D = 0, cost too): one call at a time per replica is bound by that latency.
// Flags: --fill-mib 256 --payload-kib 60 --clients 8 --wipe n3 --rebuild-seconds-max 900
//   --fill-seconds-max 900 --proxy-delay-ms (none: direct links) --cpu-prof-dir DIR (V8 CPU
//   profiles of the mq processes, written as each exits)
// Part `scan` (in this process): the scan of a replica's own payload store after it installed
// another replica's snapshot (packages/member/src/store/held-payloads.ts; a member whose log was
// dropped but whose payloads are intact). A segment store in a temporary directory takes
// --scan-mib MiB of --payload-kib KiB payloads (written through, so read from the page cache
// after); a snapshot of the same messages from a store elsewhere is installed over it and the
// held payloads recovered, twice: whole in one synchronous call (the code before issue 13's
// fix), and a step at a time with a turn of the event loop between steps (how a replica runs it
// now), while perf_hooks.monitorEventLoopDelay measures the loop's longest delay.
// --part wipe|scan|all (default all) --scan-mib 2048
// Writes bench-results/rebuild.json.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import { REPO_ROOT, machineInfo, machineLine, printTable, writeResults } from './lib/index.mjs';
import { openDriver, prepareQueue } from './peers/drivers.mjs';
import { makeTarget } from './peers/targets.mjs';
import { scanPart } from './rebuild-scan.mjs';

const PLAN = { messagesPerSpoolMax: 50_000_000, payloadBytesPerSpoolMax: 2 ** 50, dedupKeysPerSpoolMax: 2_000_000 };
const POLL_MS = 250;
const FILL_FAILURES_MAX = 100;
const FILL_RETRY_MS = 200;
const REPORT_MS = 10_000;
const LAG_SLOW_SECONDS = 0.05;

export async function run({ flags = {} } = {}) {
  const config = {
    fillMib: intFlag(flags, 'fill-mib', 256, 1, 100_000),
    payloadKib: intFlag(flags, 'payload-kib', 60, 1, 1024),
    clients: intFlag(flags, 'clients', 8, 1, 128),
    part: flags.part ?? 'all',
    scanMib: intFlag(flags, 'scan-mib', 2048, 1, 100_000),
    wipe: flags.wipe ?? 'n3',
    rebuildSecondsMax: intFlag(flags, 'rebuild-seconds-max', 900, 1, 86_400),
    fillSecondsMax: intFlag(flags, 'fill-seconds-max', 900, 1, 86_400),
    proxyDelayMs: flags['proxy-delay-ms'] === undefined ? undefined : intFlag(flags, 'proxy-delay-ms', 0, 0, 1000),
  };
  const machine = machineInfo();
  const command = ['npm run bench -- rebuild', ...process.argv.slice(3)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n\n`);
  const proxy = config.proxyDelayMs === undefined ? {} : { proxyDelayMs: config.proxyDelayMs };
  const prof = flags['cpu-prof-dir'] === undefined ? {} : { cpuProfDir: flags['cpu-prof-dir'] };
  const target = makeTarget('mq-cluster', { plan: PLAN, ...proxy, ...prof });
  const results = { machine, command, startedAt: new Date().toISOString(), config };
  if (config.part === 'scan' || config.part === 'all') results.scan = await scanPart(config);
  if (config.part === 'wipe' || config.part === 'all') await wipePart(target, config, results);
  const path = writeResults('rebuild', results);
  process.stdout.write(`results: ${relative(REPO_ROOT, path)}\n`);
}

async function wipePart(target, config, results) {
  try {
    const connection = await target.start();
    await prepareQueue(connection, 'backlog');
    results.fill = await fill(connection, config);
    const { filledMib, fillMibPerS, failed } = results.fill;
    process.stdout.write(`filled ${filledMib} MiB (${fillMibPerS} MiB/s; ${failed} sends failed)\n`);
    results.rebuild = await rebuild(target, config);
  } finally {
    await target.stop();
  }
  printResult(results);
}

async function fill(connection, config) {
  const bytes = config.payloadKib * 1024;
  const pool = randomBytes(8 << 20);
  const driver = await openDriver(connection, { clients: config.clients, queue: 'backlog' });
  try {
    const count = Math.floor((config.fillMib * 1024 * 1024) / bytes);
    let next = 0;
    const startMs = performance.now();
    const deadlineMs = startMs + config.fillSecondsMax * 1000;
    let failed = 0;
    await Promise.all(driver.clients.map(async (client) => {
      while (next < count && performance.now() < deadlineMs) {
        const from = (next++ * 65_537) % (pool.length - bytes);
        try {
          await client.send(pool.subarray(from, from + bytes));
        } catch (error) {
          // A leader change answers a send `unavailable` or `operation_unconfirmed`: the fill
          // only needs bytes stored, so it goes on (a few times; then something else is wrong).
          if (++failed > FILL_FAILURES_MAX) throw error;
          await new Promise((resolve) => setTimeout(resolve, FILL_RETRY_MS));
        }
      }
    }));
    const filledMib = (next * bytes) / (1 << 20);
    return { messages: next, failed, filledMib: round(filledMib), fillMibPerS: round(filledMib / ((performance.now() - startMs) / 1000)) };
  } finally {
    await driver.close();
  }
}

/** Wipes `config.wipe` and polls until it is rebuilt (see the file comment). */
async function rebuild(target, config) {
  const before = await scrapeAll(target);
  const startMs = performance.now();
  await target.wipe(config.wipe);
  const deadlineMs = startMs + config.rebuildSecondsMax * 1000;
  let firstMissingMs = null;
  let last = null;
  let nextReportMs = startMs + REPORT_MS;
  for (;;) {
    const now = await scrapeAll(target);
    const own = now.get(config.wipe);
    const missing = sumOf(own, 'mq_member_spool_payloads_missing');
    if (missing > 0 && firstMissingMs === null) firstMissingMs = performance.now();
    last = { missing, behind: behindGroups(own, now, config.wipe) };
    if (missing === 0 && last.behind.length === 0 && firstMissingMs !== null) break;
    if (performance.now() >= nextReportMs) {
      nextReportMs += REPORT_MS;
      const fetched = sumOf(own, 'mq_member_spool_payloads_fetched_total');
      process.stdout.write(`  ${seconds(performance.now() - startMs)} s: missing ${missing}, fetched ${fetched}\n`);
    }
    if (performance.now() > deadlineMs) {
      return { timedOut: true, after: seconds(performance.now() - startMs), last };
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const doneMs = performance.now();
  const after = await scrapeAll(target);
  const fetched = sumOf(after.get(config.wipe), 'mq_member_spool_payloads_fetched_total');
  const fetchedMib = (fetched * config.payloadKib) / 1024;
  const fetchS = (doneMs - firstMissingMs) / 1000;
  const lag = {};
  const gc = {};
  for (const [id, samples] of after) {
    const base = id === config.wipe ? [] : before.get(id);
    lag[id] = slowOver(base, samples);
    gc[id] = slowOver(base, samples, 'mq_process_gc_pause_seconds');
  }
  const primary = { before: servingIn(before), after: servingIn(after) };
  const elections = {};
  for (const [id, samples] of after) {
    if (id === config.wipe) continue;
    elections[id] = termOf(samples) - termOf(before.get(id));
  }
  return {
    rebuildS: seconds(doneMs - startMs), fetchS: round(fetchS), fetched, fetchedMib: round(fetchedMib),
    fetchMibPerS: round(fetchedMib / fetchS), lag, gc, elections, primary,
  };
}

/** Spool groups whose applied index on `id` is below the highest commit index another reports. */
function behindGroups(own, all, id) {
  const applied = byGroup(own, 'mq_member_raft_applied_index');
  const out = [];
  for (const [group, index] of applied) {
    let target = 0;
    for (const [other, samples] of all) {
      if (other === id) continue;
      target = Math.max(target, byGroup(samples, 'mq_member_raft_commit_index').get(group) ?? 0);
    }
    if (index < target) out.push(group);
  }
  return out;
}

/**
 * Observations of histogram `name` (summed over its series) slower than LAG_SLOW_SECONDS
 * between two scrapes, and the latest bucket reached.
 */
function slowOver(base, samples, name = 'mq_process_event_loop_lag_seconds') {
  const buckets = (list) => {
    const out = new Map();
    for (const s of list) {
      if (s.name === `${name}_bucket`) out.set(s.labels.le, (out.get(s.labels.le) ?? 0) + s.value);
    }
    return out;
  };
  const a = buckets(base);
  const b = buckets(samples);
  const bounds = [...b.keys()].filter((le) => le !== '+Inf').map(Number).sort((x, y) => x - y);
  const delta = (le) => (b.get(le) ?? 0) - (a.get(le) ?? 0);
  const total = delta('+Inf');
  const slow = total - delta(String(LAG_SLOW_SECONDS));
  let worst = '0';
  let below = 0;
  for (const bound of bounds) {
    const count = delta(String(bound));
    if (count > below) worst = `<=${bound}s`;
    below = count;
  }
  if (total > below) worst = `>${bounds.at(-1)}s`;
  return { probes: total, slow, worst };
}

function termOf(samples) {
  return [...byGroup(samples, 'mq_member_raft_term')].filter(([g]) => g.startsWith('spool:')).reduce((sum, [, v]) => sum + v, 0);
}

/** The members whose metrics say they serve a spool as its open primary. */
function servingIn(scrapes) {
  return [...scrapes].filter(([, s]) => sumOf(s, 'mq_member_spool_serving') > 0).map(([id]) => id);
}

function sumOf(samples, name) {
  return [...byGroup(samples, name).values()].reduce((sum, v) => sum + v, 0);
}

function byGroup(samples, name) {
  return new Map(samples.filter((s) => s.name === name).map((s) => [s.labels.group ?? '', s.value]));
}

async function scrapeAll(target) {
  const out = new Map();
  for (const [id, { port, adminPort, token }] of target.memberPorts()) {
    const open = await scrape(`http://127.0.0.1:${port}/metrics`, {});
    const admin = await scrape(`http://127.0.0.1:${adminPort}/metrics`, { authorization: `Bearer ${token}` });
    out.set(id, [...open, ...admin]);
  }
  return out;
}

/** Every sample of one /metrics (none when it does not answer). */
async function scrape(url, headers) {
  let text = '';
  try {
    text = await (await fetch(url, { headers, signal: AbortSignal.timeout(10_000) })).text();
  } catch {
    return [];
  }
  const out = [];
  for (const line of text.split('\n')) {
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/);
    if (m === null) continue;
    const labels = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) labels[pair[1]] = pair[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

function printResult({ fill: f, rebuild: r, config }) {
  if (r === undefined) return;
  if (r.timedOut) {
    process.stdout.write(`NOT rebuilt within ${config.rebuildSecondsMax} s: ${JSON.stringify(r.last)}\n`);
    return;
  }
  const lag = Object.entries(r.lag).map(([id, l]) => `${id} ${l.slow}/${l.probes} ${l.worst}`).join(', ');
  const gc = Object.entries(r.gc).map(([id, l]) => `${id} ${l.slow}/${l.probes} ${l.worst}`).join(', ');
  const elections = Object.entries(r.elections).map(([id, n]) => `${id} +${n}`).join(', ');
  printTable(
    ['fill MiB', 'payload KiB', 'rebuild s', 'fetch s', 'fetched', 'fetched MiB', 'fetch MiB/s', 'spool term', 'primary'],
    [[f.filledMib, config.payloadKib, r.rebuildS, r.fetchS, r.fetched, r.fetchedMib, r.fetchMibPerS, elections,
      `${r.primary.before.join('+') || 'none'} -> ${r.primary.after.join('+') || 'none'}`]],
  );
  printTable(['event-loop lag >50ms/probes, worst bucket', 'GC pauses >50ms/pauses, worst bucket'], [[lag, gc]]);
}

function intFlag(flags, name, fallback, min, max) {
  if (flags[name] === undefined) return fallback;
  const value = Number(flags[name]);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
  return value;
}

const seconds = (ms) => round(ms / 1000);
const round = (value) => Math.round(value * 100) / 100;
