#!/usr/bin/env node
// The load generator process: compare.mjs forks it (IPC channel) so that load and servers never
// share an event loop. It answers one request at a time: {id, op, args} -> {id, result} or
// {id, error}; ops are the phases in phases.mjs. It exits when the parent disconnects.
import { drainPhase, openLoopPhase, sendPhase } from './phases.mjs';

const OPS = { send: sendPhase, drain: drainPhase, openLoop: openLoopPhase };

if (typeof process.send !== 'function') {
  process.stderr.write('loadgen.mjs runs as a child of compare.mjs (needs an IPC channel)\n');
  process.exit(2);
}

process.on('message', async ({ id, op, args }) => {
  try {
    const phase = OPS[op];
    if (phase === undefined) throw new Error(`unknown op ${op}`);
    process.send({ id, result: await phase(args) });
  } catch (error) {
    process.send({ id, error: String(error?.stack ?? error) });
  }
});
process.on('disconnect', () => process.exit(0));
