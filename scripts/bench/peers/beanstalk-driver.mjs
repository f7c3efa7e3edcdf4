// Load-generator side of the beanstalkd target: one TCP connection per concurrent client, a
// tube per queue; send = put (answered INSERTED after the binlog write, fsynced with -f 0),
// receive = reserve-with-timeout, ack = delete.
import { BeanstalkConnection } from './beanstalk-client.mjs';

/** Tubes need no creation in beanstalkd: they exist while used or watched. */
export async function prepareBeanstalkQueue() {}

/**
 * Opens `clients` connections, each using and watching tube `queue` (and ignoring `default`).
 * @param {{port: number}} connection
 * @param {{clients: number, queue: string}} options
 */
export async function openBeanstalkDriver(connection, { clients, queue }) {
  const connections = await Promise.all(Array.from({ length: clients }, () => BeanstalkConnection.connect(connection.port)));
  await Promise.all(
    connections.map(async (c) => {
      await c.command(`use ${queue}`);
      await c.command(`watch ${queue}`);
      await c.command('ignore default');
    }),
  );
  const clientOf = (c) => ({
    async send(payload) {
      await c.put(payload);
    },
    async receive(waitMs) {
      const job = await c.reserve(Math.ceil(waitMs / 1000));
      if (job === null) return null;
      return { payload: job.payload, ack: () => c.delete(job.id) };
    },
  });
  return {
    clients: connections.map(clientOf),
    close: async () => {
      for (const c of connections) c.close();
    },
  };
}
