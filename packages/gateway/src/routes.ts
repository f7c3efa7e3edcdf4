// The /v1 route table: each path with the operation behind each method it serves. A known path
// asked with another method answers 405; a path not here answers 404 (both before auth).

import type { Operation } from './operation.js';
import {
  createQueue,
  deleteQueue,
  describeQueue,
  updateQueue,
} from './operations/queue-operations.js';
import { failureHead, listMessages, peek } from './operations/read-operations.js';
import { receive } from './operations/receive-operation.js';
import {
  ackAndSendToHeaderQueue,
  ackAndSendToPathQueue,
  send,
} from './operations/send-operations.js';
import { describeSpool, listQueues, spoolStats } from './operations/spool-operations.js';
import {
  ack,
  discard,
  fail,
  nack,
  recover,
  release,
  renew,
} from './operations/token-operations.js';

export interface Route {
  /** Hono path pattern. */
  readonly path: string;
  /** HTTP method -> operation. */
  readonly methods: Readonly<Record<string, Operation<unknown>>>;
}

const SPOOL = '/v1/spools/:spool';
const QUEUE = `${SPOOL}/queues/:queue`;

export const ROUTES: readonly Route[] = [
  { path: SPOOL, methods: { GET: describeSpool } },
  { path: `${SPOOL}/stats`, methods: { GET: spoolStats } },
  { path: `${SPOOL}/queues`, methods: { GET: listQueues } },
  {
    path: QUEUE,
    methods: { GET: describeQueue, PUT: createQueue, PATCH: updateQueue, DELETE: deleteQueue },
  },
  { path: `${QUEUE}/send`, methods: { POST: send } },
  { path: `${QUEUE}/recv`, methods: { POST: receive } },
  { path: `${QUEUE}/ack-and-send`, methods: { POST: ackAndSendToPathQueue } },
  { path: `${QUEUE}/messages`, methods: { GET: listMessages } },
  { path: `${QUEUE}/failures/head`, methods: { GET: failureHead } },
  { path: `${SPOOL}/ack`, methods: { POST: ack } },
  { path: `${SPOOL}/nack`, methods: { POST: nack } },
  { path: `${SPOOL}/release`, methods: { POST: release } },
  { path: `${SPOOL}/fail`, methods: { POST: fail } },
  { path: `${SPOOL}/renew`, methods: { POST: renew } },
  { path: `${SPOOL}/peek`, methods: { POST: peek } },
  { path: `${SPOOL}/inspect`, methods: { POST: peek } },
  { path: `${SPOOL}/recover`, methods: { POST: recover } },
  { path: `${SPOOL}/discard`, methods: { POST: discard } },
  { path: `${SPOOL}/ack-and-send`, methods: { POST: ackAndSendToHeaderQueue } },
];
