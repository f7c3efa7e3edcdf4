// A `Call` applied to a `SpoolService`: the member's server runs decoded calls through this, and
// the gateway's in-process short-circuit (a gateway inside the primary member) does the same.

import type { SpoolService } from '@spoolmq/engine';
import type { Call, OpResults } from './calls.js';

/**
 * Runs `call` on `service` and resolves with the method's result; rejects as the method does
 * (an `MqError` for expected failures). `signal` reaches only a receive (its long poll).
 */
export function dispatchCall(
  service: SpoolService,
  call: Call,
  signal?: AbortSignal,
): Promise<OpResults[Call['op']]> {
  switch (call.op) {
    case 'checkTarget':
      return service.checkTarget(call.spool, call.queue);
    case 'describeSpool':
      return service.describeSpool(call.spool);
    case 'spoolStats':
      return service.spoolStats(call.spool, call.query);
    case 'listQueues':
      return service.listQueues(call.spool, call.query);
    case 'describeQueue':
      return service.describeQueue(call.spool, call.queue);
    case 'createQueue':
      return service.createQueue(call.spool, call.queue, call.settings);
    case 'updateQueue':
      return service.updateQueue(call.spool, call.queue, call.settings);
    case 'deleteQueue':
      return service.deleteQueue(call.spool, call.queue, call.mode);
    case 'send':
      return service.send(call.spool, call.queue, call.request);
    case 'receive':
      return service.receive(
        call.spool,
        call.queue,
        signal === undefined ? { waitMs: call.waitMs } : { waitMs: call.waitMs, signal },
      );
    case 'ack':
      return service.ack(call.spool, call.lease);
    case 'nack':
      return service.nack(call.spool, call.lease);
    case 'release':
      return service.release(call.spool, call.lease, call.delayMs);
    case 'fail':
      return service.fail(call.spool, call.lease);
    case 'renew':
      return service.renew(call.spool, call.lease);
    case 'peek':
      return service.peek(call.spool, call.handle);
    case 'recover':
      return service.recover(call.spool, call.token, call.delayMs);
    case 'discard':
      return service.discard(call.spool, call.token);
    case 'listMessages':
      return service.listMessages(call.spool, call.queue, call.query);
    case 'failureHead':
      return service.failureHead(call.spool, call.queue);
    case 'ackAndSend':
      return service.ackAndSend(call.spool, call.lease, call.queue, call.request);
  }
}
