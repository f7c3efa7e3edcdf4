// Load-generator side of the NATS JetStream targets: a work-queue stream per queue on file
// storage, one durable pull consumer with explicit acks. send = js.publish, which resolves on
// the stream's PubAck (stored on the stream's replicas); receive = the client's consume()
// iterator (its recommended pull path, a small buffer per connection); ack = ackAck(), which
// waits for the server to confirm the ack, as mq's 204 does.
import { AckPolicy, RetentionPolicy, StorageType, connect } from 'nats';

/** Connections a driver opens at most; clients share them round-robin. */
const CONNECTIONS_MAX = 4;
/** Messages each connection's consume() pulls ahead. */
const PULL_BUFFER_MESSAGES = 64;
const CONSUMER = 'workers';

const subjectOf = (queue) => `bench.${queue}`;

/**
 * Creates the stream `queue` (work-queue retention, file storage, `connection.replicas` copies)
 * and its durable consumer. Retries for up to 15 s while JetStream elects its meta leader.
 * @param {{servers: string[], replicas: number}} connection
 * @param {string} queue [A-Za-z0-9_-]+
 */
export async function prepareNatsQueue(connection, queue) {
  const nc = await connect({ servers: connection.servers });
  try {
    const deadlineMs = Date.now() + 15_000;
    for (let attempt = 0; ; attempt += 1) {
      try {
        // Inside the retry: in a fresh cluster even the account-info request behind
        // jetstreamManager() times out until JetStream's meta group has a leader.
        const jsm = await nc.jetstreamManager();
        await jsm.streams.add({
          name: queue,
          subjects: [subjectOf(queue)],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          num_replicas: connection.replicas,
          max_msgs: -1,
          max_bytes: -1,
        });
        await jsm.consumers.add(queue, {
          durable_name: CONSUMER,
          ack_policy: AckPolicy.Explicit,
          max_ack_pending: 100_000,
          ack_wait: 60_000_000_000,
          num_replicas: 0,
        });
        return;
      } catch (error) {
        if (Date.now() > deadlineMs) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250 + 50 * Math.min(attempt, 20)));
      }
    }
  } finally {
    await nc.close();
  }
}

/**
 * Opens up to CONNECTIONS_MAX connections shared by `clients` logical clients.
 * @param {{servers: string[]}} connection
 * @param {{clients: number, queue: string}} options
 */
export async function openNatsDriver(connection, { clients, queue }) {
  const count = Math.min(clients, CONNECTIONS_MAX);
  const ncs = await Promise.all(Array.from({ length: count }, () => connect({ servers: connection.servers })));
  const subject = subjectOf(queue);
  const lanes = ncs.map((nc) => ({ nc, js: nc.jetstream(), inbox: null, iterator: null }));
  const startConsuming = async (lane) => {
    const consumer = await lane.js.consumers.get(queue, CONSUMER);
    lane.iterator = await consumer.consume({ max_messages: PULL_BUFFER_MESSAGES });
    const inbox = new Inbox();
    (async () => {
      for await (const m of lane.iterator) inbox.push(m);
    })().catch(() => inbox.close());
    return inbox;
  };
  const clientOf = (lane) => ({
    async send(payload) {
      await lane.js.publish(subject, payload);
    },
    async receive(waitMs) {
      lane.inbox ??= startConsuming(lane);
      const m = await (await lane.inbox).take(waitMs);
      if (m === null) return null;
      return {
        // m.data is a Uint8Array view; the workloads read it as a Buffer (no copy).
        payload: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength),
        ack: async () => {
          if (!(await m.ackAck())) throw new Error('nats ack not confirmed');
        },
      };
    },
  });
  return {
    clients: Array.from({ length: clients }, (_, i) => clientOf(lanes[i % count])),
    close: async () => {
      for (const lane of lanes) lane.iterator?.stop();
      await Promise.all(ncs.map((nc) => nc.close()));
    },
  };
}

/** Messages pulled but not yet handed to a receive, and receives waiting for one. */
class Inbox {
  constructor() {
    this.items = [];
    this.head = 0;
    this.waiters = [];
  }

  push(m) {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      clearTimeout(waiter.timer);
      waiter.resolve(m);
    } else this.items.push(m);
  }

  take(waitMs) {
    if (this.head < this.items.length) {
      const m = this.items[this.head++];
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve(m);
    }
    return new Promise((resolve) => {
      const waiter = { resolve, timer: undefined };
      waiter.timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      }, waitMs);
      this.waiters.push(waiter);
    });
  }

  close() {
    for (const w of this.waiters.splice(0)) {
      clearTimeout(w.timer);
      w.resolve(null);
    }
  }
}
