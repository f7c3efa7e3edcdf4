// The workloads, run inside the load-generator process against any driver (peers/drivers.mjs).
// Every phase is bounded in count and in time. Latencies are in milliseconds.
import { performance } from 'node:perf_hooks';
import { openDriver, prepareQueue } from '../peers/drivers.mjs';
import { Samples } from '../lib/index.mjs';

/** Sends an open-loop step may have outstanding before it sheds (counts an error) instead. */
const OPEN_LOOP_INFLIGHT_MAX = 4096;
/** How long a receive waits when the queue is empty (ms). */
const RECEIVE_WAIT_MS = 1000;

/**
 * Closed-loop sends: `clients` concurrent clients each send, await the confirmation, repeat,
 * until `count` sends were issued or `seconds` passed. ops = confirmed sends.
 * @param {{connection: object, queue: string, clients: number, payloadBytes: number, count: number, seconds: number, prepare?: boolean}} args
 */
export async function sendPhase({ connection, queue, clients, payloadBytes, count, seconds, prepare = true }) {
  if (prepare) await prepareQueue(connection, queue);
  const driver = await openDriver(connection, { clients, queue });
  const payload = Buffer.alloc(payloadBytes, 0x62);
  const latencies = new Samples(200_000);
  const errors = new Errors();
  let issued = 0;
  let done = 0;
  const startMs = performance.now();
  const deadlineMs = startMs + seconds * 1000;
  try {
    await Promise.all(
      driver.clients.map(async (client) => {
        while (issued < count && performance.now() < deadlineMs) {
          issued += 1;
          const t0 = performance.now();
          try {
            await client.send(payload);
            done += 1;
            latencies.add(performance.now() - t0);
          } catch (error) {
            errors.add(error);
          }
        }
      }),
    );
  } finally {
    await driver.close();
  }
  return result(done, performance.now() - startMs, latencies, errors);
}

/**
 * Receive + ack of a backlog: `clients` concurrent clients each receive one message, ack it,
 * repeat, until `count` cycles were claimed, the queue answers empty, or `seconds` passed.
 * ops = acked messages; latency = one receive + ack cycle.
 */
export async function drainPhase({ connection, queue, clients, count, seconds }) {
  const driver = await openDriver(connection, { clients, queue });
  const latencies = new Samples(200_000);
  const errors = new Errors();
  let claimed = 0;
  let done = 0;
  let empty = false;
  const startMs = performance.now();
  const deadlineMs = startMs + seconds * 1000;
  try {
    await Promise.all(
      driver.clients.map(async (client) => {
        while (!empty && claimed < count && performance.now() < deadlineMs) {
          claimed += 1;
          const t0 = performance.now();
          try {
            const delivery = await client.receive(RECEIVE_WAIT_MS);
            if (delivery === null) {
              empty = true;
              return;
            }
            await delivery.ack();
            done += 1;
            latencies.add(performance.now() - t0);
          } catch (error) {
            errors.add(error);
          }
        }
      }),
    );
  } finally {
    await driver.close();
  }
  return { ...result(done, performance.now() - startMs, latencies, errors), empty };
}

/**
 * Open loop at a fixed offered rate: sends are issued on a schedule (rate per second for
 * `seconds`) whether or not earlier ones finished, by `producers` clients; `consumers` clients
 * receive and ack meanwhile. Latency runs from a message's scheduled send time to its ack's
 * confirmation (so a stalled target is charged for the sends it delayed). After the schedule,
 * waits up to `settleMs` for the rest to be acked; what is not acked by then counts as `late`.
 */
export async function openLoopPhase({ connection, queue, rate, seconds, producers, consumers, payloadBytes, settleMs }) {
  await prepareQueue(connection, queue);
  const prod = await openDriver(connection, { clients: producers, queue });
  const cons = await openDriver(connection, { clients: consumers, queue });
  const latencies = new Samples(500_000);
  const errors = new Errors();
  const total = Math.max(1, Math.round(rate * seconds));
  const intervalMs = 1000 / rate;
  const template = Buffer.alloc(Math.max(8, payloadBytes), 0x63);
  let inflight = 0;
  let sent = 0;
  let acked = 0;
  let stopping = false;
  const consumeLoop = async (client) => {
    while (!stopping) {
      try {
        const delivery = await client.receive(RECEIVE_WAIT_MS);
        if (delivery === null) continue;
        const scheduledMs = delivery.payload.readDoubleLE(0);
        await delivery.ack();
        acked += 1;
        latencies.add(performance.now() - scheduledMs);
      } catch (error) {
        if (!stopping) errors.add(error);
      }
    }
  };
  const consuming = Promise.all(cons.clients.map(consumeLoop));
  const startMs = performance.now();
  let i = 0;
  // Fires every send that is due, then sleeps until the next is; bounded by `total`.
  while (i < total) {
    const nowMs = performance.now();
    while (i < total && startMs + i * intervalMs <= nowMs) {
      const scheduledMs = startMs + i * intervalMs;
      const client = prod.clients[i % producers];
      i += 1;
      if (inflight >= OPEN_LOOP_INFLIGHT_MAX) {
        errors.add('shed (too many sends outstanding)');
        continue;
      }
      const payload = Buffer.from(template);
      payload.writeDoubleLE(scheduledMs, 0);
      inflight += 1;
      client.send(payload).then(
        () => {
          inflight -= 1;
          sent += 1;
        },
        (error) => {
          inflight -= 1;
          errors.add(error);
        },
      );
    }
    if (i < total) await sleep(Math.max(0, startMs + i * intervalMs - performance.now()));
  }
  const scheduleEndMs = performance.now();
  const settleDeadlineMs = scheduleEndMs + settleMs;
  while ((inflight > 0 || acked < sent) && performance.now() < settleDeadlineMs) await sleep(5);
  const elapsedMs = performance.now() - startMs;
  stopping = true;
  await consuming;
  await Promise.all([prod.close(), cons.close()]);
  const late = Math.max(0, sent - acked) + inflight;
  return {
    ...result(acked, elapsedMs, latencies, errors),
    offeredPerS: rate,
    scheduled: total,
    sent,
    late,
    sendsBehindAtEndOfSchedule: inflight,
  };
}

class Errors {
  constructor() {
    this.counts = {};
  }
  add(error) {
    const key = String(error?.message ?? error).slice(0, 80);
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }
}

function result(ops, elapsedMs, latencies, errors) {
  const values = Float64Array.from(latencies.toArray()).sort();
  const at = (p) => (values.length === 0 ? null : round(values[Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))]));
  return {
    ops,
    seconds: round(elapsedMs / 1000),
    opsPerS: Math.round(ops / (elapsedMs / 1000)),
    latencyMs: { p50: at(50), p99: at(99), p999: at(99.9), max: values.length === 0 ? null : round(values[values.length - 1]) },
    errors: errors.counts,
    errorCount: Object.values(errors.counts).reduce((a, b) => a + b, 0),
  };
}

function round(value) {
  return Number.isFinite(value) ? Number(value.toFixed(3)) : null;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
