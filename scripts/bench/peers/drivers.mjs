// The load generator's view of a target: `prepareQueue` and `openDriver` dispatch on the
// connection's `kind`, which the target's start() returned (see targets.mjs).
//
// Driver contract (every kind):
//   openDriver(connection, {clients, queue}) -> {clients: Client[], close(): Promise<void>}
//   Client.send(payload: Buffer): Promise<void>          resolves once the target confirmed it
//                                                         (mq 201, NATS PubAck, beanstalkd INSERTED)
//   Client.receive(waitMs): Promise<Delivery | null>     null when nothing arrived within waitMs
//   Delivery = {payload: Buffer, ack(): Promise<void>}   ack resolves once the target confirmed it
import { openBeanstalkDriver, prepareBeanstalkQueue } from './beanstalk-driver.mjs';
import { openMqDriver, prepareMqQueue } from './mq-http-driver.mjs';
import { openNatsDriver, prepareNatsQueue } from './nats-driver.mjs';

const KINDS = {
  'mq-http': { prepare: prepareMqQueue, open: openMqDriver },
  nats: { prepare: prepareNatsQueue, open: openNatsDriver },
  beanstalkd: { prepare: prepareBeanstalkQueue, open: openBeanstalkDriver },
};

function kindOf(connection) {
  const kind = KINDS[connection.kind];
  if (kind === undefined) throw new Error(`unknown target kind ${connection.kind}`);
  return kind;
}

/** Creates what `queue` needs on the target (a queue, a stream and consumer, nothing). */
export function prepareQueue(connection, queue) {
  return kindOf(connection).prepare(connection, queue);
}

/** Opens `clients` clients on `queue` (see the contract above). */
export function openDriver(connection, options) {
  return kindOf(connection).open(connection, options);
}
