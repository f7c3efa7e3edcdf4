// Dedup: Svc-Dedup-String and Svc-Dedup-Hash (sha256 first 16 bytes, hex case-insensitive),
// window hits (200, original id), the header rules, dedup_disabled, keys per queue, refused
// sends not claiming keys, PATCH forgetting keys, and ack-and-send's 409 dedup_claimed.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header, type RawResponse } from './http.js';
import {
  describeResponse,
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
} from './expectations.js';

/** The interoperable fingerprint of a dedup string: sha256(key) truncated to 16 bytes, hex. */
export function dedupHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest().subarray(0, 16).toString('hex');
}

/** The Svc-Dedup-String header for `key`. */
function byKey(key: string): Record<string, string> {
  return { 'Svc-Dedup-String': key };
}

/** Asserts a dedup hit: 200, no body, the original's id. */
function expectDedupHit(response: RawResponse, originalId: string): void {
  expectStatus(response, 200);
  expect(response.body.byteLength, describeResponse(response)).toBe(0);
  expect(header(response, 'svc-message-id')).toBe(originalId);
}

export function defineDedupTests(getApi: () => Api): void {
  describe('dedup', () => {
    it('a repeat Svc-Dedup-String inside the window answers 200 with the original id and appends ' +
      'nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const originalId = await api.sendOk(queue, 'first', { 'Svc-Dedup-String': 'order-17' });
      expectDedupHit(await api.send(queue, 'second', byKey('order-17')), originalId);
      expectDedupHit(await api.send(queue, 'third', byKey('order-17')), originalId);
      const items = (await api.listMessagesOk(queue)).items;
      expect(items.map((item) => item.id)).toEqual([originalId]);
      expect(await api.queueStats(queue)).toMatchObject({ total: 1, addedTotal: 1 });
      expect((await api.recvOk(queue)).payload.toString()).toBe('first');
    });

    it('dedup strings are case-sensitive', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const lower = await api.sendOk(queue, 'a', { 'Svc-Dedup-String': 'key-a' });
      const upper = await api.sendOk(queue, 'b', { 'Svc-Dedup-String': 'KEY-A' });
      expect(upper).not.toBe(lower);
    });

    it('Svc-Dedup-Hash interoperates with Svc-Dedup-String (sha256 first 16 bytes), hex ' +
      'case-insensitive', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const byString = await api.sendOk(queue, 's', { 'Svc-Dedup-String': 'invoice-1' });
      expectDedupHit(
        await api.send(queue, 'h', { 'Svc-Dedup-Hash': dedupHash('invoice-1') }),
        byString,
      );
      expectDedupHit(
        await api.send(queue, 'H', { 'Svc-Dedup-Hash': dedupHash('invoice-1').toUpperCase() }),
        byString,
      );
      const upperHash = { 'Svc-Dedup-Hash': dedupHash('invoice-2').toUpperCase() };
      const byHash = await api.sendOk(queue, 'h2', upperHash);
      expectDedupHit(await api.send(queue, 's2', { 'Svc-Dedup-String': 'invoice-2' }), byHash);
      const lowerHash = { 'Svc-Dedup-Hash': dedupHash('invoice-2') };
      expectDedupHit(await api.send(queue, 'h3', lowerHash), byHash);
      expect((await api.listMessagesOk(queue)).items).toHaveLength(2);
    });

    it('accepts a 128-char key of printable ASCII; refuses empty, repeated, too long, or ' +
      'non-printable keys', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      let printable = '';
      for (let code = 0x21; code <= 0x7e; code += 1) printable += String.fromCharCode(code);
      const longest = printable.padEnd(128, 'z');
      await api.sendOk(queue, 'long key', { 'Svc-Dedup-String': longest });
      const bad: ReadonlyArray<string | readonly string[]> = [
        '',
        'z'.repeat(129),
        'has space',
        'caf\u00e9',
        ['twice', 'twice'],
      ];
      for (const value of bad) {
        // Non-ASCII goes on the wire as its UTF-8 bytes.
        const raw =
          typeof value === 'string' ? Buffer.from(value, 'utf8').toString('latin1') : value;
        const response = await api.send(queue, 'x', { 'Svc-Dedup-String': raw });
        expectInvalidArgument(response, 'Svc-Dedup-String');
      }
      const twoHashes = [dedupHash('a'), dedupHash('a')];
      for (const value of ['', '0'.repeat(31), '0'.repeat(33), 'g'.repeat(32), twoHashes]) {
        const response = await api.send(queue, 'x', { 'Svc-Dedup-Hash': value });
        expectInvalidArgument(response, 'Svc-Dedup-Hash');
      }
      expect((await api.listMessagesOk(queue)).items).toHaveLength(1);
    });

    it('both dedup headers together are 400 invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const response = await api.send(queue, 'x', {
        'Svc-Dedup-String': 'k',
        'Svc-Dedup-Hash': dedupHash('k'),
      });
      expectInvalidArgument(response);
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('a dedup header on a queue without a dedup window is 400 dedup_disabled', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      expectError(await api.send(queue, 'x', { 'Svc-Dedup-String': 'k' }), 400, 'dedup_disabled');
      const hash = { 'Svc-Dedup-Hash': dedupHash('k') };
      expectError(await api.send(queue, 'x', hash), 400, 'dedup_disabled');
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('dedup keys are per queue', async () => {
      const api = getApi();
      const one = await api.createQueue({ dedupWindowSeconds: 300 });
      const two = await api.createQueue({ dedupWindowSeconds: 300 });
      const first = await api.sendOk(one, 'x', { 'Svc-Dedup-String': 'shared' });
      const second = await api.sendOk(two, 'x', { 'Svc-Dedup-String': 'shared' });
      expect(second).not.toBe(first);
    });

    it('a refused send does not claim its key', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const refused = await api.send(queue, 'x', {
        'Svc-Dedup-String': 'retry-me',
        'Svc-Delay-Seconds': '604801',
      });
      expectInvalidArgument(refused, 'Svc-Delay-Seconds');
      const refusedUnknown = await api.send(queue, 'x', {
        'Svc-Dedup-String': 'retry-me',
        'Svc-Bogus': '1',
      });
      expectError(refusedUnknown, 400, 'unknown_header');
      const accepted = await api.send(queue, 'x', { 'Svc-Dedup-String': 'retry-me' });
      expectStatus(accepted, 201);
    });

    it('a message cancelled through its send handle stays the window original; so does an acked ' +
      'one', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 300 });
      const cancelled = await api.sendWithHandle(queue, 'cancel me', byKey('cancelled'));
      expectNoContent(await api.discardHandle(cancelled.handle));
      const again = await api.send(queue, 'again', byKey('cancelled'));
      expectDedupHit(again, cancelled.messageId);
      const ackedId = await api.sendOk(queue, 'ack me', { 'Svc-Dedup-String': 'acked' });
      expectNoContent(await api.ack((await api.recvOk(queue)).lease));
      expectDedupHit(await api.send(queue, 'again', { 'Svc-Dedup-String': 'acked' }), ackedId);
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('changing dedupWindowSeconds forgets every key; setting the current value changes ' +
      'nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 60 });
      const first = await api.sendOk(queue, 'x', { 'Svc-Dedup-String': 'k' });
      expectStatus(await api.patchQueue(queue, { dedupWindowSeconds: 60 }), 200);
      expectDedupHit(await api.send(queue, 'x', { 'Svc-Dedup-String': 'k' }), first);
      expectStatus(await api.patchQueue(queue, { maxRetries: 3 }), 200);
      expectDedupHit(await api.send(queue, 'x', { 'Svc-Dedup-String': 'k' }), first);
      expectStatus(await api.patchQueue(queue, { dedupWindowSeconds: 120 }), 200);
      const second = await api.sendOk(queue, 'x', { 'Svc-Dedup-String': 'k' });
      expect(second).not.toBe(first);
      expectStatus(await api.patchQueue(queue, { dedupWindowSeconds: 0 }), 200);
      expectError(await api.send(queue, 'x', { 'Svc-Dedup-String': 'k' }), 400, 'dedup_disabled');
    });

    it('ack-and-send with a dedup hit is 409 dedup_claimed with details.messageId, and acks ' +
      'nothing', async () => {
      const api = getApi();
      const source = await api.createQueue();
      const target = await api.createQueue({ dedupWindowSeconds: 300 });
      const originalId = await api.sendOk(target, 'original', { 'Svc-Dedup-String': 'step-2' });
      const sourceId = await api.sendOk(source, 'step-1');
      const delivery = await api.recvOk(source);
      const response = await api.ackAndSend(target, delivery.lease, 'duplicate', {
        'Svc-Dedup-String': 'step-2',
      });
      expectError(response, 409, 'dedup_claimed', { messageId: originalId });
      const byHash = await api.ackAndSend(target, delivery.lease, 'duplicate', {
        'Svc-Dedup-Hash': dedupHash('step-2'),
      });
      expectError(byHash, 409, 'dedup_claimed', { messageId: originalId });
      expect((await api.messageById(source, sourceId))?.state).toBe('pending');
      expect((await api.queueStats(source)).ackedTotal).toBe(0);
      expect((await api.listMessagesOk(target)).items.map((item) => item.id)).toEqual([originalId]);
      const fresh = await api.ackAndSend(target, delivery.lease, 'fresh', byKey('step-3'));
      expectStatus(fresh, 201);
      const freshId = header(fresh, 'svc-message-id') ?? '';
      expectDedupHit(await api.send(target, 'again', byKey('step-3')), freshId);
      expect((await api.queueStats(source)).ackedTotal).toBe(1);
    });

    it('ack-and-send with a dedup header into a queue without a window is 400 ' +
      'dedup_disabled', async () => {
      const api = getApi();
      const source = await api.createQueue();
      const target = await api.createQueue();
      await api.sendOk(source, 'x');
      const delivery = await api.recvOk(source);
      const response = await api.ackAndSend(target, delivery.lease, 'y', byKey('k'));
      expectError(response, 400, 'dedup_disabled');
      expectNoContent(await api.ack(delivery.lease));
    });
  });
}
