#!/usr/bin/env node
// `npm run chaos -- --minutes N --seed S`: one chaos scenario (packages/testkit/src/chaos/
// scenario.ts) with a fault phase of N minutes: three `mq member` processes behind a
// fault-injecting proxy on every link, an `mq gateway`, the seeded workload through it while the
// seeded schedule kills, pauses and wipes members and partitions, cuts, delays and drops links;
// then heal, drain, check every member rebuilt, and check the history. Prints the run's table
// and a README row; on a violation the seed, the history lines that show it, and where the
// history, data and logs were kept, and exits 1. With `--backlog-mib N`, the workload's spool is
// first filled with N MiB of incompressible messages in a backlog queue that the faults (wipes
// above all: a rebuild moves it) act on and the final drain and check account for. Run after
// `npm run build`.
import { parseArgs } from 'node:util';
import {
  formatScenario,
  markdownHeader,
  markdownRow,
  runScenario,
  scheduleDurationMsMin,
  BACKLOG_MIB_MAX,
  BACKLOG_PAYLOAD_KIB_DEFAULT,
  MEMBER_ELECTION_TIMEOUT_MS,
} from '../packages/testkit/dist/index.js';

const MINUTES_MAX = 240;
const USAGE = `Usage: npm run chaos -- [--minutes N] [--seed S] [--members M] [--keep]
                         [--backlog-mib N] [--backlog-payload-kib K]

  --minutes N   length of the fault phase, minutes (default 5, at most ${MINUTES_MAX}; at least
                enough for one episode of every fault kind, about 0.9)
  --seed S      32-bit integer seeding the schedule and the workload (default: from the clock)
  --members M   members, 3-9 (default 3)
  --keep        keep data and logs of a valid run too (an invalid run always keeps them)
  --backlog-mib N
                before the faults, fill the workload's spool with N MiB (0-${BACKLOG_MIB_MAX}) of
                incompressible messages in the queue chaos-backlog, drained and checked message
                by message at the end (default 0: no backlog); recovery deadlines grow with it
  --backlog-payload-kib K
                size of each backlog message, KiB, 1-1024 (default ${BACKLOG_PAYLOAD_KIB_DEFAULT})`;

function fail(message) {
  process.stderr.write(`chaos: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function parseCommandLine() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        minutes: { type: 'string' },
        seed: { type: 'string' },
        members: { type: 'string' },
        keep: { type: 'boolean' },
        'backlog-mib': { type: 'string' },
        'backlog-payload-kib': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(error.message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const minutes = Number(values.minutes ?? '5');
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  const members = Number(values.members ?? '3');
  if (!(minutes > 0 && minutes <= MINUTES_MAX)) fail(`--minutes must be in (0, ${MINUTES_MAX}]`);
  if (!Number.isSafeInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 32) {
    fail('--seed must be a 32-bit integer');
  }
  if (!Number.isInteger(members) || members < 3 || members > 9) fail('--members must be 3-9');
  const backlogMiB = Number(values['backlog-mib'] ?? '0');
  const backlogPayloadKiB = Number(values['backlog-payload-kib'] ?? BACKLOG_PAYLOAD_KIB_DEFAULT);
  if (!Number.isInteger(backlogMiB) || backlogMiB < 0 || backlogMiB > BACKLOG_MIB_MAX) {
    fail(`--backlog-mib must be an integer in 0-${BACKLOG_MIB_MAX}`);
  }
  if (!Number.isInteger(backlogPayloadKiB) || backlogPayloadKiB < 1 || backlogPayloadKiB > 1024) {
    fail('--backlog-payload-kib must be an integer in 1-1024');
  }
  const ids = Array.from({ length: members }, (_, i) => `n${i + 1}`);
  const electionTimeoutMs = MEMBER_ELECTION_TIMEOUT_MS;
  const minMs = scheduleDurationMsMin({ members: ids, electionTimeoutMs });
  const durationMs = Math.round(minutes * 60_000);
  if (durationMs < minMs) fail(`--minutes must be at least ${(minMs / 60_000).toFixed(3)}`);
  const keepFiles = values.keep === true;
  return { seed: seed | 0, durationMs, members, keepFiles, backlogMiB, backlogPayloadKiB };
}

const options = parseCommandLine();
// Ctrl-C or SIGTERM: exit, so the harness's exit hook kills every member and gateway it started.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));
const log = (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
try {
  const result = await runScenario({ ...options, log });
  const table = `${markdownHeader()}\n${markdownRow(result)}`;
  process.stdout.write(`\n${formatScenario(result)}\n${table}\n`);
  process.exit(result.report.valid ? 0 : 1);
} catch (error) {
  process.stderr.write(`chaos: the harness failed: ${error.stack ?? error}\n`);
  process.exit(1);
}
