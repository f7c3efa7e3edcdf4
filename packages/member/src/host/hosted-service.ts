// `SpoolService` over the spool hosts this process serves as primary: finds the host of the
// spool (404 spool_not_found otherwise) and delegates. Every method is async so a synchronous
// throw from a host becomes a rejection, as the interface promises. Calls that grow the store
// (create queue, send, ack-and-send) first ask the growth guard, once the host is found (a
// member that is not the primary still redirects): the disk and memory watermarks refuse there.

import {
  type Delivery,
  type DeleteMode,
  type ListQuery,
  type MessageListQuery,
  type MessageView,
  MqError,
  type Page,
  type PeekResult,
  type QueueView,
  type ReceiveRequest,
  type SendRequest,
  type SendResult,
  type SettingsInput,
  type SettingsPatch,
  type SpoolService,
  type SpoolView,
  type StatsPage,
  type StatsQuery,
  type TokenRef,
} from '@spoolmq/engine';
import type { SpoolHost } from './spool-host.js';

/**
 * Finds the host serving `spool` now, or throws the MqError that answers the call (404
 * spool_not_found, 503 unavailable with a notPrimary hint in the cluster).
 */
export type HostResolver = (spool: string) => SpoolHost;

/** Refusal of a call that would grow the store (507 storage_full; 503 on memory), or null. */
export type GrowthGuard = () => MqError | null;

export class HostedSpoolService implements SpoolService {
  /**
   * `hosts`: a fixed map (the local variant) or a resolver (the cluster, where the spools served
   * here change with leadership). `isReady`: the answer of `ready()` (default: always ready).
   * `growthGuard`: asked before create queue, send and ack-and-send (default: never refuses).
   */
  constructor(
    private readonly hosts: ReadonlyMap<string, SpoolHost> | HostResolver,
    private readonly isReady: () => boolean = () => true,
    private readonly growthGuard: GrowthGuard = () => null,
  ) {}

  /** The host of `spool` for a call that grows the store; throws the guard's refusal. */
  private growingHost(spool: string): SpoolHost {
    const host = this.host(spool);
    const refusal = this.growthGuard();
    if (refusal !== null) throw refusal;
    return host;
  }

  private host(spool: string): SpoolHost {
    if (typeof this.hosts === 'function') return this.hosts(spool);
    const host = this.hosts.get(spool);
    if (host === undefined) throw new MqError('spool_not_found', `spool ${spool} does not exist`);
    return host;
  }

  async checkTarget(spool: string, queue?: string): Promise<void> {
    this.host(spool).checkTarget(queue);
  }

  ready(): boolean {
    return this.isReady();
  }

  async describeSpool(spool: string): Promise<SpoolView> {
    return this.host(spool).describe();
  }

  async spoolStats(spool: string, query: StatsQuery): Promise<StatsPage> {
    return this.host(spool).stats(query);
  }

  async listQueues(spool: string, query: ListQuery): Promise<Page<QueueView>> {
    return this.host(spool).listQueues(query);
  }

  async describeQueue(spool: string, queue: string): Promise<QueueView> {
    return this.host(spool).describeQueue(queue);
  }

  async createQueue(spool: string, queue: string, input: SettingsInput): Promise<QueueView> {
    return this.growingHost(spool).createQueue(queue, input);
  }

  async updateQueue(spool: string, queue: string, patch: SettingsPatch): Promise<QueueView> {
    return this.host(spool).updateQueue(queue, patch);
  }

  async deleteQueue(
    spool: string,
    queue: string,
    mode: DeleteMode,
  ): Promise<'deleted' | 'accepted'> {
    return this.host(spool).deleteQueue(queue, mode);
  }

  async send(spool: string, queue: string, request: SendRequest): Promise<SendResult> {
    return this.growingHost(spool).send(queue, request);
  }

  async receive(spool: string, queue: string, request: ReceiveRequest): Promise<Delivery | null> {
    return this.host(spool).receive(queue, request);
  }

  async ack(spool: string, lease: string): Promise<void> {
    return this.host(spool).ack(lease);
  }

  async nack(spool: string, lease: string): Promise<void> {
    return this.host(spool).nack(lease);
  }

  async release(spool: string, lease: string, delayMs: number): Promise<void> {
    return this.host(spool).release(lease, delayMs);
  }

  async fail(spool: string, lease: string): Promise<void> {
    return this.host(spool).fail(lease);
  }

  async renew(spool: string, lease: string): Promise<{ readonly leaseExpiresAtMs?: number }> {
    return this.host(spool).renew(lease);
  }

  async peek(spool: string, handle: string): Promise<PeekResult> {
    return this.host(spool).peek(handle);
  }

  async recover(spool: string, token: TokenRef, delayMs: number): Promise<void> {
    return this.host(spool).recover(token, delayMs);
  }

  async discard(spool: string, token: TokenRef): Promise<void> {
    return this.host(spool).discard(token);
  }

  async listMessages(
    spool: string,
    queue: string,
    query: MessageListQuery,
  ): Promise<Page<MessageView>> {
    return this.host(spool).listMessages(queue, query);
  }

  async failureHead(spool: string, queue: string): Promise<Delivery | null> {
    return this.host(spool).failureHead(queue);
  }

  async ackAndSend(
    spool: string,
    lease: string,
    queue: string,
    request: SendRequest,
  ): Promise<SendResult> {
    return this.growingHost(spool).ackAndSend(lease, queue, request);
  }
}
