// Load-generator side of the mq targets (local, serve, cluster): the /v1 HTTP API, one request
// per send, receive and ack, as a user's HTTP client would, over undici (the client behind
// Node's fetch) with one keep-alive connection per logical client and no pipelining.
// node:http's client cost this process 70-100 us of CPU a request against undici's 50 on the
// 2-core bench machine, CPU the server under test then lacked (docs/internals.md, compare).
import { Pool } from 'undici';

/** `mq local` accepts any key; `mq serve` and clusters give theirs in the connection. */
const ANY_KEY = 'bench';
const authOf = (connection) => `Bearer ${connection.apiKey ?? ANY_KEY}`;
const SPOOL_PATH = '/v1/spools/default';
const originOf = (connection) => `http://127.0.0.1:${connection.port}`;

/**
 * Creates `queue` (201, or 409 when it exists). Rejects on any other answer.
 * @param {{port: number}} connection
 * @param {string} queue name, ^[A-Za-z0-9_:-]{1,63}$
 */
export async function prepareMqQueue(connection, queue) {
  const pool = new Pool(originOf(connection), { connections: 1 });
  try {
    const headers = { authorization: authOf(connection), 'content-type': 'application/json' };
    const answer = await request(pool, 'PUT', `${SPOOL_PATH}/queues/${queue}`, headers, '{}');
    if (answer.status !== 201 && answer.status !== 409) {
      throw new Error(`create ${queue}: ${answer.status} ${answer.body}`);
    }
  } finally {
    await pool.destroy();
  }
}

/**
 * Opens `clients` logical clients sharing one pool with as many connections.
 * send resolves on 201 and rejects otherwise; receive resolves a delivery or null on 204.
 * @param {{port: number}} connection
 * @param {{clients: number, queue: string}} options
 */
export function openMqDriver(connection, { clients, queue }) {
  const pool = new Pool(originOf(connection), { connections: clients, pipelining: 1 });
  const auth = authOf(connection);
  const sendPath = `${SPOOL_PATH}/queues/${queue}/send`;
  const recvPath = `${SPOOL_PATH}/queues/${queue}/recv?waitSeconds=`;
  const sendHeaders = { authorization: auth, 'content-type': 'application/octet-stream' };
  const recvHeaders = { authorization: auth };
  const ack = async (lease) => {
    const headers = { authorization: auth, 'svc-lease': lease };
    const answer = await request(pool, 'POST', `${SPOOL_PATH}/ack`, headers);
    if (answer.status !== 204) throw new Error(`ack ${answer.status}`);
  };
  const client = {
    async send(payload) {
      const answer = await request(pool, 'POST', sendPath, sendHeaders, payload);
      if (answer.status !== 201) {
        throw new Error(`send ${answer.status} ${String(answer.body).slice(0, 300)}`);
      }
    },
    async receive(waitMs) {
      const path = recvPath + Math.min(20, Math.ceil(waitMs / 1000));
      const answer = await request(pool, 'POST', path, recvHeaders);
      if (answer.status === 204) return null;
      if (answer.status !== 200) throw new Error(`recv ${answer.status}`);
      const lease = answer.headers['svc-lease'];
      return { payload: answer.body, ack: () => ack(lease) };
    },
  };
  return { clients: Array.from({ length: clients }, () => client), close: () => pool.destroy() };
}

/** One request; resolves {status, headers, body} with the whole body read. */
async function request(pool, method, path, headers, body) {
  const answer = await pool.request({ method, path, headers, body });
  const bytes = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, headers: answer.headers, body: bytes };
}
