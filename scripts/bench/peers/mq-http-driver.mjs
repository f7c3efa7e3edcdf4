// Load-generator side of the mq targets (local, serve, cluster): the /v1 HTTP API over a
// keep-alive Agent, one request per send, receive and ack, as a user's HTTP client would.
import http from 'node:http';

/** `mq local` accepts any key; `mq serve` and clusters give theirs in the connection. */
const ANY_KEY = 'bench';
const authOf = (connection) => `Bearer ${connection.apiKey ?? ANY_KEY}`;
const SPOOL_PATH = '/v1/spools/default';

/**
 * Creates `queue` (201, or 409 when it exists). Rejects on any other answer.
 * @param {{port: number}} connection
 * @param {string} queue name, ^[A-Za-z0-9_:-]{1,63}$
 */
export async function prepareMqQueue(connection, queue) {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const answer = await request(agent, connection.port, authOf(connection), 'PUT', `${SPOOL_PATH}/queues/${queue}`, { 'content-type': 'application/json' }, Buffer.from('{}'));
    if (answer.status !== 201 && answer.status !== 409) throw new Error(`create ${queue}: ${answer.status} ${answer.body}`);
  } finally {
    agent.destroy();
  }
}

/**
 * Opens `clients` logical clients sharing one keep-alive Agent with as many sockets.
 * send resolves on 201 and rejects otherwise; receive resolves a delivery or null on 204.
 * @param {{port: number}} connection
 * @param {{clients: number, queue: string}} options
 */
export function openMqDriver(connection, { clients, queue }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients, maxFreeSockets: clients });
  const { port } = connection;
  const auth = authOf(connection);
  const sendPath = `${SPOOL_PATH}/queues/${queue}/send`;
  const recvPath = `${SPOOL_PATH}/queues/${queue}/recv?waitSeconds=`;
  const sendHeaders = { 'content-type': 'application/octet-stream' };
  const ack = async (lease) => {
    const answer = await request(agent, port, auth, 'POST', `${SPOOL_PATH}/ack`, { 'svc-lease': lease });
    if (answer.status !== 204) throw new Error(`ack ${answer.status}`);
  };
  const client = {
    async send(payload) {
      const answer = await request(agent, port, auth, 'POST', sendPath, sendHeaders, payload);
      if (answer.status !== 201) throw new Error(`send ${answer.status} ${String(answer.body ?? "").slice(0, 300)}`);
    },
    async receive(waitMs) {
      const answer = await request(agent, port, auth, 'POST', recvPath + Math.min(20, Math.ceil(waitMs / 1000)), {});
      if (answer.status === 204) return null;
      if (answer.status !== 200) throw new Error(`recv ${answer.status}`);
      const lease = answer.headers['svc-lease'];
      return { payload: answer.body, ack: () => ack(lease) };
    },
  };
  return { clients: Array.from({ length: clients }, () => client), close: async () => agent.destroy() };
}

/** One request; resolves {status, headers, body}. Rejects only on transport failure. */
function request(agent, port, auth, method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: '127.0.0.1', port, method, path, headers: { authorization: auth, 'content-length': body === undefined ? 0 : body.length, ...headers } },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
