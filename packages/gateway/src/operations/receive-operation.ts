// Receive: a long poll for one message. The service gets a signal that fires when the client
// goes away or the gateway shuts down, and answers null promptly then (204). A delivery the
// client never saw — its connection closed before the 200 was written — is released at once
// with no retry spent, best effort, so the message is not stuck until its lease times out.

import { ServerResponse } from 'node:http';
import type { Delivery } from '@spoolmq/engine';
import { pathQueue, type GatewayRequest, type Operation } from '../operation.js';
import { waitSecondsParam } from '../params.js';
import { emptyResponse, payloadResponse, type HeaderRecord } from '../responses.js';
import { timestamp } from '../views.js';

/** Headers of a 200 receive. */
export function deliveryHeaders(delivery: Delivery): HeaderRecord {
  const headers: HeaderRecord = {
    'svc-lease': delivery.lease,
    'svc-message-id': delivery.messageId,
    'svc-message-retries': String(delivery.retries),
  };
  if (delivery.leaseExpiresAtMs !== undefined) {
    headers['svc-lease-expires-at'] = timestamp(delivery.leaseExpiresAtMs);
  }
  return headers;
}

/**
 * Follows the client of one receive. Under Node it listens to the response's `close` (an
 * EventEmitter listener, cheaper than the web Request's signal); under `app.request()` to the
 * Request's signal. Once the client is gone the wait is aborted, and a delivery handed over is
 * released.
 */
class ClientWatch {
  readonly controller = new AbortController();
  gone = false;
  private handed: Delivery | undefined;

  constructor(private readonly request: GatewayRequest) {
    const outgoing = request.c.env?.outgoing;
    if (outgoing instanceof ServerResponse) {
      outgoing.once('close', () => {
        if (!outgoing.writableFinished) this.leave();
      });
      return;
    }
    const signal = request.c.req.raw.signal;
    if (signal.aborted) this.gone = true;
    else signal.addEventListener('abort', () => this.leave(), { once: true });
  }

  /** Gives the delivery to the client; false (and released) when the client already left. */
  handOver(delivery: Delivery): boolean {
    if (this.gone) {
      this.release(delivery);
      return false;
    }
    this.handed = delivery;
    return true;
  }

  private leave(): void {
    if (this.gone) return;
    this.gone = true;
    this.controller.abort();
    if (this.handed !== undefined) this.release(this.handed);
  }

  private release(delivery: Delivery): void {
    // Best effort: if this fails the lease simply times out as it would without the release.
    const { service } = this.request.deps;
    service.release(this.request.spool, delivery.lease, 0).catch(() => undefined);
  }
}

export const receive: Operation<number> = {
  name: 'receive',
  svcHeaders: new Set(),
  query: { waitSeconds: 1 },
  scope: 'queue',
  parse: (request) => waitSecondsParam(request.query) * 1000,
  async run(request, waitMs) {
    const { longPolls, service } = request.deps;
    const watch = new ClientWatch(request);
    if (watch.gone || longPolls.stopping) return emptyResponse(204);
    const { controller } = watch;
    const account = request.c.get('account');
    longPolls.begin(controller, account);
    let delivery: Delivery | null;
    try {
      const queue = pathQueue(request);
      delivery = await service.receive(request.spool, queue, { waitMs, signal: controller.signal });
    } finally {
      longPolls.end(controller, account);
    }
    if (delivery === null || !watch.handOver(delivery)) return emptyResponse(204);
    return payloadResponse(delivery.payload, deliveryHeaders(delivery));
  },
};
