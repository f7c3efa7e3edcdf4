#!/usr/bin/env node
// Raft I/O benchmark: the disk, the storage engine, the transport and (when the RaftNode driver
// is built) a whole 3-member group, each member in its own process.
//   1. disk      write + fdatasync of 4 KiB in a loop in the data directory: the floor under
//                every durable write, measured in the same run.
//   2. storage   LevelStorageEngine, one group, `c` concurrent writers each saving one 128-byte
//                entry and waiting for it: saves/s, fsyncs/s, entries per fsync, save latency.
//   3. transport GrpcTransport to an echo member in another process: `c` outstanding
//                AppendEntries (one 128-byte entry each) answered by AppendEntriesResponse:
//                round trips/s and round-trip latency.
//   4. raft      3 member processes (LevelStorageEngine with fsync + GrpcTransport + RaftNode)
//                on 127.0.0.1; the leader's process runs `c` concurrent proposers of 128-byte
//                commands: committed proposals/s, commit latency p50/p99, leader fsyncs/s.
// Flags: --seconds 5 (per phase) --concurrency 1,64,1024 --payload 128 --dir <data dir>
//        --only disk,storage,transport,raft --cpu-prof (profile the member processes; .cpuprofile
//        files under bench-results/prof)
// Needs `npx tsc -b packages/raft` first (it imports @spoolmq/raft from dist).
// Prints tables and writes bench-results/raft.json.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { REPO_ROOT, Samples, machineInfo, machineLine, printTable, spawnTracked, stopChild, summarize, writeResults } from './lib/index.mjs';

const SCRIPT = fileURLToPath(import.meta.url);
const TARGET_PROPOSALS_PER_S = 50_000;
const MESSAGE_APPEND = 0;
const MESSAGE_APPEND_RESPONSE = 1;
/** Extra node flags for child processes (profiling). */
let childExecArgv = [];

export async function run({ flags = {} } = {}) {
  const config = {
    seconds: numberFlag(flags, 'seconds', 5, 1, 600),
    concurrency: listFlag(flags, 'concurrency', [1, 64, 1024]),
    payloadBytes: numberFlag(flags, 'payload', 128, 1, 1_048_576),
    only: flags.only ? String(flags.only).split(',') : ['disk', 'storage', 'transport', 'raft'],
    dir: flags.dir ? String(flags.dir) : undefined,
    cpuProf: flags['cpu-prof'] === true,
  };
  if (config.cpuProf) childExecArgv = ['--cpu-prof', `--cpu-prof-dir=${join(REPO_ROOT, 'bench-results', 'prof')}`];
  const machine = machineInfo();
  const command = ['node', relative(REPO_ROOT, SCRIPT), ...process.argv.slice(2)].join(' ');
  const root = config.dir ?? mkdtempSync(join(tmpdir(), 'mq-bench-raft-'));
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\ndata: ${root}\n`);
  process.stdout.write(`phases of ${config.seconds} s, payload ${config.payloadBytes} B, concurrency ${config.concurrency.join(', ')}\n\n`);
  const raft = await import('@spoolmq/raft');
  const results = { machine, command, startedAt: new Date().toISOString(), config, dataDirectory: root };
  try {
    if (config.only.includes('disk')) results.disk = diskPhase(root);
    if (config.only.includes('storage')) results.storage = await storagePhase(raft, root, config);
    if (config.only.includes('transport')) results.transport = await transportPhase(raft, config);
    if (config.only.includes('raft')) results.raft = await raftPhase(raft, root, config, results.disk);
  } finally {
    if (!config.dir) rmSync(root, { recursive: true, force: true });
  }
  const path = writeResults('raft', results);
  process.stdout.write(`results: ${relative(REPO_ROOT, path)}\n`);
  return results;
}

// ---------------------------------------------------------------------------------------------
// 1. disk

function diskPhase(root) {
  const path = join(root, 'fsync-probe');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(4096, 7);
  const latencies = [];
  try {
    for (let i = 0; i < 1000; i++) {
      const started = performance.now();
      writeSync(fd, block);
      fdatasyncSync(fd);
      latencies.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  const s = summarize(latencies);
  const disk = { samples: s.count, p50Ms: round(s.p50), p99Ms: round(s.p99), maxMs: round(s.max) };
  process.stdout.write('disk: write 4 KiB + fdatasync\n');
  printTable(['samples', 'p50 ms', 'p99 ms', 'max ms'], [[disk.samples, disk.p50Ms, disk.p99Ms, disk.maxMs]]);
  return disk;
}

// ---------------------------------------------------------------------------------------------
// 2. storage

async function storagePhase(raft, root, config) {
  const rows = [];
  for (const concurrency of config.concurrency) {
    const directory = join(root, `storage-${concurrency}`);
    const engine = await raft.LevelStorageEngine.open(directory);
    const storage = engine.group('spool:bench');
    await storage.load();
    await storage.save({ term: 1, vote: 'n1', commit: 0 }, []);
    const payload = Buffer.alloc(config.payloadBytes, 1);
    let next = 1;
    const latencies = new Samples();
    const before = engine.stats();
    const deadline = performance.now() + config.seconds * 1000;
    const started = performance.now();
    const worker = async () => {
      while (performance.now() < deadline) {
        const index = next++;
        const t0 = performance.now();
        await storage.save(null, [{ index, term: 1, type: 0, data: payload }]);
        latencies.add(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const elapsedS = (performance.now() - started) / 1000;
    const after = engine.stats();
    await engine.close();
    rmSync(directory, { recursive: true, force: true });
    const fsyncs = after.fsyncs - before.fsyncs;
    const saves = after.callsWritten - before.callsWritten;
    const s = summarize(latencies.toArray());
    rows.push({
      concurrency,
      savesPerS: Math.round(saves / elapsedS),
      fsyncsPerS: Math.round(fsyncs / elapsedS),
      entriesPerFsync: round(saves / Math.max(1, fsyncs)),
      fsyncMsMean: round((after.fsyncMsTotal - before.fsyncMsTotal) / Math.max(1, fsyncs)),
      saveP50Ms: round(s.p50),
      saveP99Ms: round(s.p99),
    });
  }
  process.stdout.write('storage: LevelStorageEngine, one group, one 128 B entry per save, group commit\n');
  printTable(
    ['concurrency', 'saves/s', 'fsyncs/s', 'entries/fsync', 'fsync ms', 'save p50 ms', 'save p99 ms'],
    rows.map((r) => [r.concurrency, r.savesPerS, r.fsyncsPerS, r.entriesPerFsync, r.fsyncMsMean, r.saveP50Ms, r.saveP99Ms]),
  );
  return rows;
}

// ---------------------------------------------------------------------------------------------
// 3. transport

async function transportPhase(raft, config) {
  const echo = spawnMember(['--role', 'echo']);
  const echoReady = await nextMessage(echo, (m) => m.type === 'ready');
  const transport = await raft.GrpcTransport.start({
    selfId: 'client',
    listen: '127.0.0.1:0',
    peers: { echo: echoReady.address },
    security: raft.INSECURE_CLUSTER,
  });
  echo.send({ type: 'peers', peers: { client: transport.address } });
  const waiting = new Map();
  transport.onMessage((_group, message) => {
    const resolve = waiting.get(message.leaderTick);
    if (resolve) {
      waiting.delete(message.leaderTick);
      resolve();
    }
  });
  const payload = Buffer.alloc(config.payloadBytes, 2);
  let nextId = 1;
  const roundTrip = () =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      transport.send('spool:bench', [appendMessage('client', 'echo', id, payload)]);
    });
  // Warm up until the stream is up (bounded: the echo member is local).
  for (let i = 0; i < 500 && transport.stats().peers.echo.sentMessages === 0; i++) {
    const done = roundTrip();
    await Promise.race([done, delay(20)]);
  }
  await roundTrip();
  const rows = [];
  for (const concurrency of config.concurrency) {
    const latencies = new Samples();
    let completed = 0;
    const deadline = performance.now() + config.seconds * 1000;
    const started = performance.now();
    const framesBefore = transport.stats().peers.echo.sentFrames;
    const worker = async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await roundTrip();
        latencies.add(performance.now() - t0);
        completed++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const elapsedS = (performance.now() - started) / 1000;
    const frames = transport.stats().peers.echo.sentFrames - framesBefore;
    const s = summarize(latencies.toArray());
    rows.push({
      concurrency,
      roundTripsPerS: Math.round(completed / elapsedS),
      messagesPerFrame: round(completed / Math.max(1, frames)),
      rttP50Ms: round(s.p50),
      rttP99Ms: round(s.p99),
    });
  }
  await transport.close();
  await stopChild(echo);
  process.stdout.write('transport: GrpcTransport, AppendEntries (one 128 B entry) -> response, echo member in another process\n');
  printTable(
    ['concurrency', 'round trips/s', 'msgs/frame', 'rtt p50 ms', 'rtt p99 ms'],
    rows.map((r) => [r.concurrency, r.roundTripsPerS, r.messagesPerFrame, r.rttP50Ms, r.rttP99Ms]),
  );
  return rows;
}

function appendMessage(from, to, id, payload) {
  return {
    type: MESSAGE_APPEND,
    from,
    to,
    term: 1,
    prevLogIndex: id - 1,
    prevLogTerm: 1,
    leaderCommit: 0,
    leaderTick: id,
    entries: [{ index: id, term: 1, type: 0, data: payload }],
  };
}

// ---------------------------------------------------------------------------------------------
// 4. raft

async function raftPhase(raft, root, config, disk) {
  if (typeof raft.RaftNode !== 'function') {
    process.stdout.write('raft: skipped, RaftNode is not exported by @spoolmq/raft (build packages/raft once it exists)\n\n');
    return { skipped: 'RaftNode not available' };
  }
  const ids = ['n1', 'n2', 'n3'];
  const members = ids.map((id) => spawnMember(['--role', 'member', '--id', id, '--dir', join(root, `raft-${id}`)]));
  const ready = await Promise.all(members.map((child) => nextMessage(child, (m) => m.type === 'ready')));
  const peers = Object.fromEntries(ids.map((id, i) => [id, ready[i].address]));
  for (const child of members) child.send({ type: 'start', peers });
  const leaderIndex = await waitForLeader(members);
  const leader = members[leaderIndex];
  process.stdout.write(`raft: leader ${ids[leaderIndex]}\n`);
  const rows = [];
  try {
    for (const concurrency of config.concurrency) {
      leader.send({ type: 'load', concurrency, seconds: config.seconds, payloadBytes: config.payloadBytes });
      const result = await nextMessage(leader, (m) => m.type === 'load-result', (config.seconds + 60) * 1000);
      rows.push({ concurrency, ...result.row });
    }
  } finally {
    for (const child of members) child.send({ type: 'stop' });
    // Let members close cleanly (and write their profiles) before forcing them.
    await Promise.all(members.map((child) => Promise.race([exited(child), delay(10_000)])));
    await Promise.all(members.map((child) => stopChild(child)));
  }
  process.stdout.write('raft: 3 member processes, LevelStorageEngine (fsync) + GrpcTransport + RaftNode, proposals on the leader\n');
  printTable(
    ['concurrency', 'committed/s', 'commit p50 ms', 'commit p99 ms', 'leader fsyncs/s', 'entries/fsync', 'errors'],
    rows.map((r) => [r.concurrency, r.committedPerS, r.commitP50Ms, r.commitP99Ms, r.leaderFsyncsPerS, r.entriesPerFsync, r.errors]),
  );
  const c1 = rows.find((r) => r.concurrency === 1);
  const c1024 = rows.find((r) => r.concurrency === 1024);
  const targets = {
    committedPerSAt1024: { target: TARGET_PROPOSALS_PER_S, measured: c1024?.committedPerS ?? null, met: (c1024?.committedPerS ?? 0) >= TARGET_PROPOSALS_PER_S },
    commitP50MsAt1: c1 && disk ? { targetMs: round(3 * disk.p50Ms + 1), measuredMs: c1.commitP50Ms, met: c1.commitP50Ms <= 3 * disk.p50Ms + 1 } : null,
  };
  process.stdout.write(`targets: ${JSON.stringify(targets)}\n\n`);
  return { leader: ids[leaderIndex], rows, targets };
}

async function waitForLeader(members) {
  for (let attempt = 0; attempt < 300; attempt++) {
    for (const child of members) child.send({ type: 'status' });
    const statuses = await Promise.all(members.map((child) => nextMessage(child, (m) => m.type === 'status')));
    const leader = statuses.findIndex((s) => s.leader);
    if (leader >= 0) return leader;
    await delay(100);
  }
  throw new Error('no leader elected within 30 s');
}

// ---------------------------------------------------------------------------------------------
// child processes

function spawnMember(args) {
  const child = spawnTracked(process.execPath, [...childExecArgv, SCRIPT, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.inbox = [];
  child.waiters = [];
  child.on('message', (message) => {
    const waiter = child.waiters.find((w) => w.match(message));
    if (waiter) {
      child.waiters.splice(child.waiters.indexOf(waiter), 1);
      clearTimeout(waiter.timer);
      waiter.resolve(message);
    } else child.inbox.push(message);
  });
  child.once('exit', (code, signal) => {
    for (const waiter of child.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`bench member exited (${code ?? signal})`));
    }
  });
  return child;
}

function nextMessage(child, match, timeoutMs = 30_000) {
  const queued = child.inbox.findIndex(match);
  if (queued >= 0) return Promise.resolve(child.inbox.splice(queued, 1)[0]);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bench member did not answer in time')), timeoutMs);
    child.waiters.push({ match, resolve, reject, timer });
  });
}

/** Entry point of a child: `--role echo` or `--role member --id <id> --dir <dir>`. */
async function childMain(flags) {
  const raft = await import('@spoolmq/raft');
  if (flags.role === 'echo') return echoMain(raft);
  if (flags.role === 'member') return memberMain(raft, flags);
  throw new Error(`unknown role ${flags.role}`);
}

async function echoMain(raft) {
  const transport = await raft.GrpcTransport.start({
    selfId: 'echo',
    listen: '127.0.0.1:0',
    peers: {},
    security: raft.INSECURE_CLUSTER,
  });
  transport.onMessage((group, message) => {
    transport.send(group, [
      {
        type: MESSAGE_APPEND_RESPONSE,
        from: 'echo',
        to: message.from,
        term: message.term,
        success: true,
        matchIndex: message.prevLogIndex + message.entries.length,
        conflictIndex: 0,
        conflictTerm: 0,
        leaderTick: message.leaderTick,
      },
    ]);
  });
  process.on('message', (message) => {
    if (message.type === 'peers') transport.setPeers(message.peers);
  });
  process.send({ type: 'ready', address: transport.address });
}

/** A bench member: LevelStorageEngine (fsync) + GrpcTransport + RaftNode of one group. */
async function memberMain(raft, flags) {
  const id = String(flags.id);
  const engine = await raft.LevelStorageEngine.open(String(flags.dir));
  const transport = await raft.GrpcTransport.start({
    selfId: id,
    listen: '127.0.0.1:0',
    peers: {},
    security: raft.INSECURE_CLUSTER,
  });
  const router = new raft.GroupRouter(transport);
  let node = null;
  process.on('message', (message) => {
    const reply = (answer) => process.send(answer);
    if (message.type === 'start') {
      transport.setPeers(message.peers);
      raft.RaftNode.start({
        id,
        group: 'spool:bench',
        storage: engine.group('spool:bench'),
        transport,
        stateMachine: new CounterStateMachine(),
        bootstrap: Object.keys(message.peers),
      }).then((started) => {
        node = started;
        router.add('spool:bench', node);
      });
    } else if (message.type === 'status') {
      reply({ type: 'status', leader: node?.isLeader() ?? false });
    } else if (message.type === 'load') {
      proposeLoad(node, engine, message).then((row) => reply({ type: 'load-result', row }));
    } else if (message.type === 'stop') {
      (async () => {
        await node?.close();
        await transport.close();
        await engine.close();
        process.exit(0);
      })();
    }
  });
  process.send({ type: 'ready', address: transport.address });
}

/** `concurrency` proposers, each proposing and waiting for commit + apply, for `seconds`. */
async function proposeLoad(node, engine, { concurrency, seconds, payloadBytes }) {
  const payload = Buffer.alloc(payloadBytes, 3);
  // Warm up the JIT and the connections before measuring.
  await Promise.all(Array.from({ length: 64 }, async () => {
    for (let i = 0; i < 30; i++) await node.propose(payload).catch(() => undefined);
  }));
  const latencies = new Samples();
  let committed = 0;
  let errors = 0;
  const before = engine.stats();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        await node.propose(payload);
      } catch (error) {
        errors++;
        if (error?.kind === 'not_leader' || error?.kind === 'closed') return;
        continue;
      }
      latencies.add(performance.now() - t0);
      committed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  const after = engine.stats();
  const s = summarize(latencies.toArray());
  const fsyncs = after.fsyncs - before.fsyncs;
  return {
    committedPerS: Math.round(committed / elapsedS),
    commitP50Ms: round(s.p50),
    commitP99Ms: round(s.p99),
    leaderFsyncsPerS: Math.round(fsyncs / elapsedS),
    leaderFsyncMsMean: round((after.fsyncMsTotal - before.fsyncMsTotal) / Math.max(1, fsyncs)),
    entriesPerFsync: round((after.entriesWritten - before.entriesWritten) / Math.max(1, fsyncs)),
    errors,
  };
}

/** The replicated state: a count of applied commands (enough to exercise apply and snapshots). */
class CounterStateMachine {
  count = 0;
  apply() {
    return ++this.count;
  }
  snapshot() {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(this.count);
    return bytes;
  }
  restore(chunks) {
    this.count = Buffer.concat([...chunks]).readDoubleBE(0);
  }
}

// ---------------------------------------------------------------------------------------------

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', resolve));
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function round(value) {
  return Number.isFinite(value) ? Number(value.toFixed(3)) : null;
}

function numberFlag(flags, name, fallback, min, max) {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number in ${min}..${max}`);
  return value;
}

function listFlag(flags, name, fallback) {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const values = String(raw).split(',').map(Number);
  if (values.some((v) => !Number.isInteger(v) || v < 1 || v > 100_000)) throw new Error(`--${name}: integers 1..100000, comma-separated`);
  return values;
}

function parseFlags(argv) {
  const flags = {};
  for (let i = 0; i < argv.length; i += 1) {
    const key = argv[i].replace(/^--/, '');
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[key] = argv[++i];
    else flags[key] = true;
  }
  return flags;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flags = parseFlags(process.argv.slice(2));
  const main = flags.role ? childMain(flags) : run({ flags });
  main.then(
    () => {
      if (!flags.role) process.exit(0);
    },
    (error) => {
      process.stderr.write(`bench raft failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
