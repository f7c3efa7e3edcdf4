#!/usr/bin/env node
// `node scripts/memory-bound.mjs` (after `npm run build`): `mq serve` as a real process with a
// small V8 heap (`--max-old-space-size=HEAP_MIB`, default 48) filled with 128-byte messages
// (issue 13 item 4). Sends, with a dedup key each as a tenant's would carry, go on until the
// memory watermark answers 503; then consumers receive and ack until the alarm clears, a send
// must be accepted again. Checked: the process never dies (of heap exhaustion or anything else),
// every 503 came before an append (the queue holds exactly the messages answered 201, less those
// acked), every receive and ack under the alarm succeeds, and the alarm clears by itself. Prints what it saw; exits 1 on a violation.
// Bounded: at most SENDS_MAX sends and PHASE_SECONDS_MAX seconds a phase. About a minute.
//   HEAP_MIB=96 CLIENTS=64 PAYLOAD_CACHE=4MiB node scripts/memory-bound.mjs   (the cache's
//   budget, mq serve's --payload-cache; default 64MiB)
import { randomBytes } from 'node:crypto';
import { ServeProcess } from '../packages/testkit/dist/cluster/index.js';

const HEAP_MIB = Number(process.env.HEAP_MIB ?? 48);
const CLIENTS = Number(process.env.CLIENTS ?? 64);
const PAYLOAD_BYTES = 128;
const SENDS_MAX = 3_000_000;
const PHASE_SECONDS_MAX = 240;
/** Refusals in a row, across clients, that end the fill phase. */
const REFUSALS_TO_STOP = 200;
const QUEUE = 'fill';
const DEDUP_WINDOW_SECONDS = 30;

const violations = [];
const violation = (what) => {
  violations.push(what);
  console.log(`VIOLATION: ${what}`);
};

const cacheEnv = process.env.PAYLOAD_CACHE === undefined ? {} : { MQ_PAYLOAD_CACHE: process.env.PAYLOAD_CACHE };
const serve = await ServeProcess.start({ nodeArgs: [`--max-old-space-size=${HEAP_MIB}`], env: cacheEnv });
const root = serve.baseUrl.replace(/\/v1$/, '');
const auth = { authorization: `Bearer ${await serve.apiKey()}` };
const v1 = `${serve.baseUrl}/spools/default`;
let died = null;
void serve.node.exited.then((status) => (died = status));

async function call(method, path, headers = {}, body = undefined) {
  const response = await fetch(`${v1}${path}`, { method, headers: { ...auth, ...headers }, body });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function readyzMemory() {
  return (await (await fetch(`${root}/readyz`)).json()).memory;
}

async function parallel(count, work) {
  await Promise.all(Array.from({ length: count }, () => work()));
}

function deadlineOf() {
  return Date.now() + PHASE_SECONDS_MAX * 1000;
}

/** Sends until REFUSALS_TO_STOP 503s in a row; returns the counts. */
async function fill() {
  const deadline = deadlineOf();
  let accepted = 0;
  let refused = 0;
  let inRow = 0;
  let next = 0;
  let acceptedAtFirstRefusal = null;
  const others = new Map();
  await parallel(CLIENTS, async () => {
    while (inRow < REFUSALS_TO_STOP && next < SENDS_MAX && Date.now() < deadline && !died) {
      const n = next++;
      const body = randomBytes(PAYLOAD_BYTES);
      const answer = await call('POST', `/queues/${QUEUE}/send`, { 'svc-dedup-string': `k${n}` }, body);
      if (answer.status === 201) {
        accepted++;
        inRow = 0;
      } else if (answer.status === 503) {
        refused++;
        inRow++;
        acceptedAtFirstRefusal ??= accepted;
        if (answer.headers.get('retry-after') === null) violation('503 without Retry-After');
      } else {
        others.set(answer.status, (others.get(answer.status) ?? 0) + 1);
      }
    }
  });
  return { accepted, refused, acceptedAtFirstRefusal, others: Object.fromEntries(others) };
}

/** Receives and acks until `stop()` or the queue is empty; every call must succeed. */
async function drain(stop) {
  const deadline = deadlineOf();
  let acked = 0;
  let empty = false;
  await parallel(CLIENTS, async () => {
    while (!empty && !stop() && Date.now() < deadline && !died) {
      const got = await call('POST', `/queues/${QUEUE}/recv?waitSeconds=0`);
      if (got.status === 204) {
        empty = true;
        break;
      }
      if (got.status !== 200) {
        violation(`receive answered ${got.status} ${got.body}`);
        return;
      }
      const ack = await call('POST', '/ack', { 'svc-lease': got.headers.get('svc-lease') });
      if (ack.status !== 204) violation(`ack answered ${ack.status} ${ack.body}`);
      else acked++;
    }
  });
  return { acked, empty };
}

async function stats() {
  return JSON.parse((await call('GET', '/stats')).body).stats;
}

/** Samples the alarm every 50th call of the drain (a /readyz per receive would be the load). */
let pollCount = 0;
function pollAlarm() {
  if (++pollCount % 50 === 0) {
    void readyzMemory().then((memory) => {
      if (!memory.alarm) pollAlarm.cleared = true;
    });
  }
  return pollAlarm.cleared === true;
}

try {
  // A short window: a drained message's dedup entry stays until its window passes, so a long
  // one would hold the heap above the clear mark for that long after the drain.
  const created = await call('PUT', `/queues/${QUEUE}`, { 'content-type': 'application/json' },
    JSON.stringify({ dedupWindowSeconds: DEDUP_WINDOW_SECONDS }));
  if (created.status !== 201) throw new Error(`create queue: ${created.status} ${created.body}`);
  const baseline = await readyzMemory();
  const started = Date.now();
  const filled = await fill();
  const fillS = (Date.now() - started) / 1000;
  const atAlarm = await readyzMemory();
  console.log(`heap ${HEAP_MIB} MiB: fill ${JSON.stringify(filled)} in ${fillS.toFixed(1)} s`);
  console.log(`  memory at the end of the fill: ${JSON.stringify(atAlarm)}`);
  const perMessage = (atAlarm.usedBytes - baseline.usedBytes) / Math.max(1, filled.accepted);
  console.log(
    `  heap in use ${baseline.usedBytes} before, ${atAlarm.usedBytes} after: ` +
      `${Math.round(perMessage)} bytes per stored message (garbage included)`,
  );
  if (filled.acceptedAtFirstRefusal !== null && atAlarm.usedBytes > atAlarm.limitBytes) {
    violation('heap in use above the old space limit');
  }
  if (filled.refused === 0) violation('no send was refused');
  const before = await stats();
  if (before.total !== filled.accepted) {
    violation(`stored ${before.total} messages, ${filled.accepted} answered 201`);
  }
  let alarm = true;
  const untilClear = await drain(pollAlarm);
  const clearWait = deadlineOf();
  while (alarm && Date.now() < clearWait && !died) {
    alarm = (await readyzMemory()).alarm;
    if (alarm) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  console.log(`  drained ${untilClear.acked} until the alarm cleared (alarm now ${alarm})`);
  if (alarm) violation('the memory alarm never cleared');
  const resumed = await call('POST', `/queues/${QUEUE}/send`, {}, randomBytes(PAYLOAD_BYTES));
  if (resumed.status !== 201) violation(`send after the alarm cleared: ${resumed.status}`);
  const after = await stats();
  const expected = filled.accepted + (resumed.status === 201 ? 1 : 0) - untilClear.acked;
  console.log(`  after the resumed send: ${after.total} stored, ${expected} expected`);
  if (after.total !== expected) violation(`stored ${after.total}, expected ${expected}`);
  const metrics = await (await fetch(`${root}/metrics`)).text();
  const line = (name) => metrics.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm'))?.[1];
  console.log(
    `  mq_member_memory_alarms_total ${line('mq_member_memory_alarms_total')}, ` +
      `refused_total ${line('mq_member_memory_refused_total')}`,
  );
} catch (error) {
  violation(`run failed: ${error instanceof Error ? error.stack : error}`);
} finally {
  if (died) violation(`mq serve exited: ${JSON.stringify(died)}\n${serve.node.tail(20)}`);
  if (/heap out of memory/i.test(serve.node.tail(200))) violation('heap out of memory in the log');
  await serve.stop();
}

console.log(violations.length === 0 ? 'ok: no violation' : `${violations.length} violation(s)`);
process.exit(violations.length === 0 ? 0 : 1);
