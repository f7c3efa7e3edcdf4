#!/usr/bin/env node
// Queue engine benchmark: the pure state machine of one spool, in process, no I/O.
// Phases (each bounded by --cycles operations or --seconds, whichever ends first):
//   cycle    send + receive + ack of one message at a time (the queue stays near empty)
//   batch    send 256, receive 256, ack 256 (a consumer pool's pattern): cycles/s
//   send     sends alone into a growing backlog: sends/s
//   drain    receive + ack of that backlog: cycles/s
//   replica  encode + decode + apply of send and ack commands (the log round trip a Raft
//            follower's apply depends on): cycles/s
// Payloads are --payload bytes (default 128). Needs `npx tsc -b packages/engine` first (it
// imports @spoolmq/engine from dist). Prints a table and writes bench-results/engine.json.
// Flags: --cycles 1000000 --seconds 10 --payload 128
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT, machineInfo, machineLine, printTable, writeResults } from './lib/index.mjs';

const SCRIPT = fileURLToPath(import.meta.url);
const TARGET_CYCLES_PER_S = 500_000;
const BATCH = 256;
/** Operations between clock reads and deadline checks. */
const STRIDE = 1024;

/**
 * Runs every phase and returns the results object (also written to bench-results/engine.json).
 * @param {{flags?: Record<string, string | true>}} options
 *   flags.cycles 1..100,000,000 (default 1,000,000), flags.seconds 1..600 (default 10),
 *   flags.payload 0..1,048,576 bytes (default 128).
 */
export async function run({ flags = {} } = {}) {
  const config = {
    cycles: numberFlag(flags, 'cycles', 1_000_000, 1, 100_000_000),
    seconds: numberFlag(flags, 'seconds', 10, 1, 600),
    payloadBytes: numberFlag(flags, 'payload', 128, 0, 1_048_576),
  };
  const engineModule = await import('@spoolmq/engine');
  const machine = machineInfo();
  const command = ['node', relative(REPO_ROOT, SCRIPT), ...process.argv.slice(2)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n`);
  process.stdout.write(`up to ${config.cycles.toLocaleString('en-US')} operations or ${config.seconds} s per phase, payload ${config.payloadBytes} B\n\n`);
  const phases = [
    cyclePhase(engineModule, config),
    batchPhase(engineModule, config),
    ...sendThenDrainPhases(engineModule, config),
    replicaPhase(engineModule, config),
  ];
  printTable(
    ['phase', 'what', 'operations', 'seconds', 'per second'],
    phases.map((p) => [p.phase, p.unit, p.operations, Number(p.seconds.toFixed(3)), Math.round(p.perSecond)]),
  );
  const cycle = phases.find((p) => p.phase === 'cycle');
  const verdict = cycle.perSecond >= TARGET_CYCLES_PER_S ? 'meets' : 'misses';
  process.stdout.write(`send+receive+ack target ${TARGET_CYCLES_PER_S.toLocaleString('en-US')}/s: ${verdict} (${Math.round(cycle.perSecond).toLocaleString('en-US')}/s)\n`);
  const results = { machine, command, startedAt: new Date().toISOString(), config, targetCyclesPerSecond: TARGET_CYCLES_PER_S, phases };
  const path = writeResults('engine', results);
  process.stdout.write(`results: ${relative(REPO_ROOT, path)}\n`);
  return results;
}

/** A primary engine with one queue and a plan roomy enough for the backlog phases. */
function setup({ SpoolEngine, resolvePlan, resolveSettings }, config) {
  const messages = Math.max(1_000_000, config.cycles + BATCH);
  const plan = resolvePlan({
    messagesPerSpoolMax: messages,
    payloadBytesPerSpoolMax: Math.max(1024 ** 3, messages * Math.max(1, config.payloadBytes)),
  });
  const engine = new SpoolEngine(plan);
  const now = Date.now();
  engine.openPrimary(now);
  const result = engine.apply({ type: 'createQueue', name: 'bench', settings: resolveSettings({}, plan) }, now);
  if (result.kind !== 'queue') throw new Error(`create failed: ${JSON.stringify(result)}`);
  return { engine, queue: engine.queue('bench'), payload: new Uint8Array(config.payloadBytes).fill(7) };
}

function sendCommand(queue, payload) {
  return { type: 'send', queueGen: queue.gen, delayMs: 0, dedupKey: null, payload };
}

function expectKind(result, kind) {
  if (result.kind !== kind) throw new Error(`expected ${kind}, got ${JSON.stringify(result)}`);
}

function receiveOne(engine, queue, now) {
  const message = engine.receive(queue, now);
  if (message === null || typeof message === 'string') throw new Error(`receive got ${String(message)}`);
  return message;
}

/** Runs `step` (which does `stride` operations) until the count or time bound; returns the phase row. */
function timed(phase, unit, config, stride, step) {
  const deadline = performance.now() + config.seconds * 1000;
  const start = performance.now();
  let operations = 0;
  while (operations < config.cycles && performance.now() < deadline) {
    const n = Math.min(stride, config.cycles - operations);
    step(n, Date.now());
    operations += n;
  }
  const seconds = (performance.now() - start) / 1000;
  return { phase, unit, operations, seconds, perSecond: operations / seconds };
}

function cyclePhase(module, config) {
  const { engine, queue, payload } = setup(module, config);
  return timed('cycle', 'send+receive+ack', config, STRIDE, (n, now) => {
    for (let i = 0; i < n; i++) {
      expectKind(engine.apply(sendCommand(queue, payload), now), 'appended');
      const message = receiveOne(engine, queue, now);
      expectKind(engine.apply({ type: 'ack', queueGen: queue.gen, seq: message.seq, gen: message.gen }, now), 'ok');
    }
  });
}

function batchPhase(module, config) {
  const { engine, queue, payload } = setup(module, config);
  const held = new Array(BATCH);
  return timed('batch', `send+receive+ack (${BATCH} at a time)`, config, BATCH, (n, now) => {
    for (let i = 0; i < n; i++) expectKind(engine.apply(sendCommand(queue, payload), now), 'appended');
    for (let i = 0; i < n; i++) held[i] = receiveOne(engine, queue, now);
    for (let i = 0; i < n; i++) {
      const message = held[i];
      expectKind(engine.apply({ type: 'ack', queueGen: queue.gen, seq: message.seq, gen: message.gen }, now), 'ok');
    }
  });
}

function sendThenDrainPhases(module, config) {
  const { engine, queue, payload } = setup(module, config);
  const send = timed('send', 'send', config, STRIDE, (n, now) => {
    for (let i = 0; i < n; i++) expectKind(engine.apply(sendCommand(queue, payload), now), 'appended');
  });
  const backlog = { ...config, cycles: send.operations };
  const drain = timed('drain', 'receive+ack (backlog)', backlog, STRIDE, (n, now) => {
    for (let i = 0; i < n; i++) {
      const message = receiveOne(engine, queue, now);
      expectKind(engine.apply({ type: 'ack', queueGen: queue.gen, seq: message.seq, gen: message.gen }, now), 'ok');
    }
  });
  return [send, drain];
}

/** A follower: decodes each logged command and applies it (no receives: leases are primary-local). */
function replicaPhase(module, config) {
  const { encodeCommand, decodeCommand } = module;
  const { engine, queue, payload } = setup(module, config);
  let seq = engine.state.nextSeq;
  return timed('replica', 'encode+decode+apply send and ack', config, STRIDE, (n, now) => {
    for (let i = 0; i < n; i++) {
      const sent = encodeCommand(sendCommand(queue, payload));
      expectKind(engine.apply(decodeCommand(sent), now), 'appended');
      const acked = encodeCommand({ type: 'ack', queueGen: queue.gen, seq, gen: 0 });
      expectKind(engine.apply(decodeCommand(acked), now), 'ok');
      seq++;
    }
  });
}

function numberFlag(flags, name, fallback, min, max) {
  if (flags[name] === undefined) return fallback;
  const value = Number(flags[name]);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in ${min}..${max}`);
  return value;
}

if (process.argv[1] === SCRIPT) {
  const flags = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) continue;
    const [key, inline] = arg.slice(2).split('=', 2);
    flags[key] = inline ?? (argv[i + 1] && !argv[i + 1].startsWith('--') ? argv[++i] : true);
  }
  run({ flags }).catch((error) => {
    process.stderr.write(`bench failed: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  });
}
