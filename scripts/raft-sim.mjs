#!/usr/bin/env node
// Runs the deterministic Raft simulation (packages/raft/test/sim) over many seeds, outside the
// normal test budget. Each job is one vitest process over a contiguous seed range.
//
//   node scripts/raft-sim.mjs --seeds 10000 [--start 1] [--steps 3000] [--jobs 1]
//   node scripts/raft-sim.mjs --seed 4242 [--trace]     replay one seed (trace prints events)
//
// A failure prints the seed and the line to replay it; the exit code is non-zero.

import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const TEST = 'packages/raft/test/sim/simulation.test.ts';

function parse(argv) {
  const args = { seeds: 1000, start: 1, steps: 3000, jobs: 1, seed: null, trace: false };
  for (let i = 0; i < argv.length; i += 1) {
    const name = argv[i];
    if (name === '--trace') {
      args.trace = true;
      continue;
    }
    const value = Number(argv[i + 1]);
    i += 1;
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`bad value for ${name}`);
    if (name === '--seeds') args.seeds = value;
    else if (name === '--start') args.start = value;
    else if (name === '--steps') args.steps = value;
    else if (name === '--jobs') args.jobs = Math.max(1, value);
    else if (name === '--seed') args.seed = value;
    else throw new Error(`unknown option ${name}`);
  }
  return args;
}

function run(env) {
  return new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', TEST], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const args = parse(process.argv.slice(2));
const started = performance.now();
let jobs;
if (args.seed !== null) {
  jobs = [{ RAFT_SEED: String(args.seed), RAFT_SIM_STEPS: String(args.steps), RAFT_TRACE: args.trace ? '1' : '0' }];
} else {
  const per = Math.ceil(args.seeds / args.jobs);
  jobs = [];
  for (let first = args.start; first < args.start + args.seeds; first += per) {
    const count = Math.min(per, args.start + args.seeds - first);
    jobs.push({ RAFT_SEEDS: String(count), RAFT_SEED_START: String(first), RAFT_SIM_STEPS: String(args.steps) });
  }
}
const results = await Promise.all(jobs.map(run));
let failed = false;
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');
for (const [i, { code, output }] of results.entries()) {
  const text = strip(output);
  const summary = text.split('\n').find((line) => line.startsWith('raft simulation:'));
  const range = jobs[i].RAFT_SEED ?? `${jobs[i].RAFT_SEED_START}..${Number(jobs[i].RAFT_SEED_START) + Number(jobs[i].RAFT_SEEDS) - 1}`;
  if (code === 0) {
    console.log(`seeds ${range}: ok ${summary ?? ''}`);
  } else {
    failed = true;
    const failure = text.split('\n').filter((line) => /failed, seed|replay:|Violation|Error/.test(line)).slice(0, 6);
    console.log(`seeds ${range}: FAILED\n${failure.join('\n')}`);
    if (args.seed !== null) console.log(text);
  }
}
console.log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
