// Drain deletion: 202 and the draining state, refusing new messages (409 queue_draining) while
// staying consumable, disappearing after its last message, failed messages blocking it, and the
// name being reusable afterwards. Force deletion lives with the queue lifecycle tests.

import { describe, expect, it } from 'vitest';
import { deliveryOf, type Api } from './api.js';
import { jsonBody } from './http.js';
import { expectError, expectNoContent, expectStatus } from './expectations.js';
import { pollUntil } from './poll.js';
import { expectQueueObject } from './queues.js';

async function expectDraining(api: Api, queue: string): Promise<void> {
  expect((await api.describeQueueOk(queue)).state).toBe('draining');
}

/** Waits (bounded) for a drained queue to leave: describe answers 404 queue_not_found. */
async function waitUntilGone(api: Api, queue: string): Promise<void> {
  await pollUntil(`drained queue ${queue} to be deleted`, async () => {
    const response = await api.describeQueue(queue);
    if (response.status === 200) return undefined;
    expectError(response, 404, 'queue_not_found');
    return true;
  });
}

export function defineDrainTests(getApi: () => Api): void {
  describe('drain', () => {
    it('draining an empty queue answers 204 and deletes it at once', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      expectNoContent(await api.deleteQueue(queue, 'drain'));
      expectError(await api.describeQueue(queue), 404, 'queue_not_found');
      expectStatus(await api.putQueue(queue), 201);
    });

    it('a drain with a backlog answers 202; the queue refuses sends, stays consumable, then ' +
      'leaves', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'one');
      await api.sendOk(queue, 'two');
      const response = await api.deleteQueue(queue, 'drain');
      expectStatus(response, 202);
      await expectDraining(api, queue);
      expectError(await api.send(queue, 'late'), 409, 'queue_draining');
      const exact = encodeURIComponent(`^${queue}$`);
      const listed = await api.call('GET', api.spoolPath(`/queues?match=${exact}`));
      expectStatus(listed, 200);
      const items = (jsonBody(listed) as { items: unknown[] }).items;
      expect(items).toHaveLength(1);
      expect(expectQueueObject(items[0], queue).state).toBe('draining');
      const patched = await api.patchQueue(queue, { maxRetries: 1 });
      expectStatus(patched, 200);
      expect(expectQueueObject(jsonBody(patched), queue).state).toBe('draining');
      const first = await api.recvOk(queue);
      expect(first.payload.toString()).toBe('one');
      expectNoContent(await api.ack(first.lease));
      await expectDraining(api, queue);
      const second = await api.recvOk(queue);
      expectNoContent(await api.nack(second.lease));
      const again = await api.recvOk(queue);
      expect(again.payload.toString()).toBe('two');
      expectNoContent(await api.ack(again.lease));
      await waitUntilGone(api, queue);
      expectStatus(await api.putQueue(queue), 201);
      expect((await api.describeQueueOk(queue)).state).toBe('active');
    });

    it('ack-and-send into a draining queue is 409 queue_draining and acks nothing', async () => {
      const api = getApi();
      const source = await api.createQueue();
      const target = await api.createQueue();
      await api.sendOk(target, 'keeps it draining');
      expectStatus(await api.deleteQueue(target, 'drain'), 202);
      const sourceId = await api.sendOk(source, 'work');
      const delivery = await api.recvOk(source);
      expectError(await api.ackAndSend(target, delivery.lease, 'refused'), 409, 'queue_draining');
      expect((await api.messageById(source, sourceId))?.state).toBe('pending');
      expectNoContent(await api.ack(delivery.lease));
      expectNoContent(await api.discardLease((await api.recvOk(target)).lease));
      await waitUntilGone(api, target);
    });

    it('failed messages block a drain until recovered or discarded; recover works while ' +
      'draining', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'fails-1');
      await api.sendOk(queue, 'fails-2');
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      expectStatus(await api.deleteQueue(queue, 'drain'), 202);
      await expectDraining(api, queue);
      expectNoContent(await api.recv(queue, 0));
      // Recover the first failure while draining, then consume it: one failure still blocks.
      const head = deliveryOf(await api.failureHead(queue));
      expect(head.payload.toString()).toBe('fails-1');
      expectNoContent(await api.tokenOp('recover', { 'Svc-Lease': head.lease }));
      const recovered = await api.recvOk(queue);
      expect(recovered.payload.toString()).toBe('fails-1');
      expectNoContent(await api.ack(recovered.lease));
      expect(await api.queueStats(queue)).toMatchObject({ total: 1, failed: 1 });
      await expectDraining(api, queue);
      const last = deliveryOf(await api.failureHead(queue));
      expect(last.payload.toString()).toBe('fails-2');
      await expectDraining(api, queue);
      expectNoContent(await api.discardLease(last.lease));
      await waitUntilGone(api, queue);
    });
  });
}
