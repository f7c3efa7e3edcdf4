// Delays: Svc-Delay-Seconds on send (integer seconds) and Svc-Delay on release (Go-style
// durations, at most 168h). Short delays are observed through bounded polling; long ones
// through the listing's visibleAt.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header } from './http.js';
import {
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
} from './expectations.js';
import { pollUntil } from './poll.js';

const slackMs = 5_000;

const badDurations = [
  '1.5s', '10us', '-1s', '5', '1h 30m', '169h', '168h1ms', '', '1d', '+1s', 'ms', '1S', 'h1',
];

/** Asserts a listed message is delayed with visibleAt about `delayMs` after the window. */
async function expectDelayed(
  api: Api,
  queue: string,
  messageId: string,
  delayMs: number,
  startMs: number,
): Promise<void> {
  const item = await api.messageById(queue, messageId);
  expect(item?.state).toBe('delayed');
  const visibleAtMs = expectTimestamp(item?.visibleAt);
  expect(visibleAtMs).toBeGreaterThanOrEqual(startMs + delayMs - slackMs);
  expect(visibleAtMs).toBeLessThanOrEqual(Date.now() + delayMs + slackMs);
}

/** Receives with long polls until a message arrives (bounded); returns its payload. */
async function receiveEventually(api: Api, queue: string): Promise<string> {
  return pollUntil(`a message on ${queue}`, async () => {
    const response = await api.recv(queue, 2);
    if (response.status === 204) return undefined;
    expectStatus(response, 200);
    return response.body.toString();
  });
}

export function defineDelayTests(getApi: () => Api): void {
  describe('delays', () => {
    it('Svc-Delay-Seconds makes a sent message delayed with a visibleAt, not receivable ' +
      'yet', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const start = Date.now();
      const messageId = await api.sendOk(queue, 'later', { 'Svc-Delay-Seconds': '3600' });
      await expectDelayed(api, queue, messageId, 3_600_000, start);
      expectNoContent(await api.recv(queue, 0));
      expect(await api.queueStats(queue)).toMatchObject({
        total: 1,
        delayed: 1,
        visible: 0,
        addedTotal: 1,
      });
      const immediate = await api.sendOk(queue, 'now', { 'Svc-Delay-Seconds': '0' });
      expect((await api.recvOk(queue)).messageId).toBe(immediate);
    });

    it('Svc-Delay-Seconds accepts 604800 and refuses anything but plain digits within ' +
      '0..604800', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const start = Date.now();
      const week = await api.sendOk(queue, 'week', { 'Svc-Delay-Seconds': '604800' });
      await expectDelayed(api, queue, week, 604_800_000, start);
      for (const bad of ['604801', '-1', '+5', '1.5', '1e3', '', '5s', '0x10', ['1', '1']]) {
        expectInvalidArgument(
          await api.send(queue, 'x', { 'Svc-Delay-Seconds': bad }),
          'Svc-Delay-Seconds',
        );
      }
      expect((await api.listMessagesOk(queue)).items).toHaveLength(1);
    });

    it('a delayed message becomes receivable once its delay elapses, keeping its send ' +
      'handle', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'soon', { 'Svc-Delay-Seconds': '1' });
      await pollUntil('the delayed message to peek as visible', async () => {
        const response = await api.peek(sent.handle);
        expectStatus(response, 200);
        return header(response, 'svc-message-state') === 'visible' ? true : undefined;
      });
      // The handle minted while delayed is still current, so it can still cancel the message.
      expectNoContent(await api.discardHandle(sent.handle));
      expectNoContent(await api.recv(queue, 0));
      const second = await api.sendOk(queue, 'soon again', { 'Svc-Delay-Seconds': '1' });
      // A long poll wakes when a delayed message becomes visible: one receive, well within
      // its wait.
      const response = await api.recv(queue, 10);
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('soon again');
      expect(header(response, 'svc-message-id')).toBe(second);
    });

    it('a delayed send can be cancelled with its send handle', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'cancel', { 'Svc-Delay-Seconds': '3600' });
      expectNoContent(await api.discardHandle(sent.handle));
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
      expect(await api.queueStats(queue)).toMatchObject({
        total: 0,
        delayed: 0,
        discardedTotal: 1,
      });
    });

    it('release with Svc-Delay 90s, 1h30m and 168h delays the message by that much, spending no ' +
      'retry', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const cases: ReadonlyArray<readonly [string, number]> = [
        ['90s', 90_000],
        ['1h30m', 5_400_000],
        ['168h', 604_800_000],
      ];
      for (const [duration, delayMs] of cases) {
        const messageId = await api.sendOk(queue, duration);
        const delivery = await api.recvOk(queue);
        expect(delivery.messageId).toBe(messageId);
        const start = Date.now();
        expectNoContent(await api.release(delivery.lease, duration));
        await expectDelayed(api, queue, messageId, delayMs, start);
        expect((await api.messageById(queue, messageId))?.retries).toBe(0);
      }
      expect(await api.queueStats(queue)).toMatchObject({
        delayed: 3,
        releasedTotal: 3,
        nackedTotal: 0,
      });
    });

    it('release with Svc-Delay 500ms and 1s returns the messages once the delays ' +
      'elapse', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'half');
      await api.sendOk(queue, 'one');
      expectNoContent(await api.release((await api.recvOk(queue)).lease, '500ms'));
      expectNoContent(await api.release((await api.recvOk(queue)).lease, '1s'));
      const received = [await receiveEventually(api, queue), await receiveEventually(api, queue)];
      expect(received.sort()).toEqual(['half', 'one']);
    });

    it('release refuses malformed or too long durations with 400 invalid_argument, leaving the ' +
      'lease valid', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'stay');
      const delivery = await api.recvOk(queue);
      for (const bad of badDurations) {
        expectInvalidArgument(await api.release(delivery.lease, bad), 'Svc-Delay');
      }
      const twice = { 'Svc-Lease': delivery.lease, 'Svc-Delay': ['1s', '1s'] };
      expectInvalidArgument(await api.tokenOp('release', twice));
      expect((await api.messageById(queue, messageId))?.state).toBe('pending');
      expect((await api.queueStats(queue)).releasedTotal).toBe(0);
      expectNoContent(await api.ack(delivery.lease));
    });
  });
}
