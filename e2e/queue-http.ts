// The few API calls the e2e scenarios make, over plain fetch so every status is seen as the
// gateway answered it. A request that gets no answer resolves with status 0.

/** A client-side bound on one request: longer than a long poll, shorter than a scenario. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface Answer {
  /** The HTTP status, or 0 when no answer came (connection refused or reset, timeout). */
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface Delivery {
  readonly payload: string;
  readonly lease: string;
  readonly messageId: string;
}

export class QueueHttp {
  constructor(
    /** `http://host:port/v1` of the gateway. */
    readonly apiUrl: string,
    private readonly key: string,
    readonly spool = 'default',
  ) {}

  private get spoolUrl(): string {
    return `${this.apiUrl}/spools/${this.spool}`;
  }

  async call(method: string, path: string, init: RequestInit = {}): Promise<Answer> {
    try {
      const response = await fetch(`${this.spoolUrl}${path}`, {
        ...init,
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(init.headers as Record<string, string>) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return { status: response.status, headers: response.headers, body: await response.text() };
    } catch {
      return { status: 0, headers: new Headers(), body: '' };
    }
  }

  createQueue(queue: string, settings: Readonly<Record<string, number>>): Promise<Answer> {
    return this.call('PUT', `/queues/${queue}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(settings),
    });
  }

  /** One send attempt; a `dedupKey` makes a retry of an unanswered send safe. */
  send(queue: string, payload: string, dedupKey?: string): Promise<Answer> {
    const dedup: Record<string, string> = dedupKey === undefined ? {} : { 'svc-dedup-string': dedupKey };
    return this.call('POST', `/queues/${queue}/send`, {
      headers: { 'content-type': 'application/octet-stream', ...dedup },
      body: payload,
    });
  }

  /** A delivery, `null` on 204, or the answer when it was neither. */
  async recv(queue: string, waitSeconds: number): Promise<Delivery | null | Answer> {
    const answer = await this.call('POST', `/queues/${queue}/recv?waitSeconds=${waitSeconds}`);
    if (answer.status === 204) return null;
    if (answer.status !== 200) return answer;
    return {
      payload: answer.body,
      lease: answer.headers.get('svc-lease')!,
      messageId: answer.headers.get('svc-message-id')!,
    };
  }

  ack(lease: string): Promise<Answer> {
    return this.call('POST', '/ack', { headers: { 'svc-lease': lease } });
  }

  async stats(): Promise<Record<string, any>> {
    const answer = await this.call('GET', '/stats');
    if (answer.status !== 200) throw new Error(`stats: ${answer.status} ${answer.body}`);
    return JSON.parse(answer.body) as Record<string, any>;
  }
}

export const isDelivery = (value: Delivery | null | Answer): value is Delivery =>
  value !== null && 'lease' in value;
