// One client's recorded calls: each request through @spoolmq/client becomes an invoke event, then
// an ok, fail or info completion in the History. The classification is the interface's: a 4xx is
// answered before anything changed (fail); a 503 to a send likewise; any other 5xx, a timeout or
// no answer may have acted (info).

import { MqClientError, isMqClientError } from '@spoolmq/client';
import type { CompletionFields, History, InvokeFields, OpKind } from './history.js';

export type Recorded<T> =
  | { readonly outcome: 'ok'; readonly value: T }
  | { readonly outcome: 'fail'; readonly error: MqClientError }
  | { readonly outcome: 'info'; readonly error: unknown };

/** Completion fields of an error answer: status, kind, 410 reason, dedup_claimed's id. */
export function errorFields(error: MqClientError): CompletionFields {
  const reason = error.details['reason'];
  const messageId = error.details['messageId'];
  return {
    status: error.status,
    ...(error.kind === undefined ? {} : { errorKind: error.kind }),
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(typeof messageId === 'string' ? { messageId } : {}),
  };
}

/** Whether an error answer certainly changed nothing. */
export function isDefiniteFailure(kind: OpKind, error: MqClientError): boolean {
  if (error.status >= 400 && error.status < 500) return true;
  // The interface: a send's 503 is answered before any append is attempted.
  return kind === 'send' && error.status === 503;
}

function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export class Recorder {
  constructor(
    private readonly history: History,
    readonly client: string,
    /** Client-side bound on one request, ms. */
    private readonly requestTimeoutMs: number,
  ) {}

  /**
   * Records `kind` with `fields`, runs `perform` under a timeout signal, and records the answer:
   * `done(value)` gives the ok completion's fields. Never rejects: failures come back as values.
   */
  async call<T>(
    kind: OpKind,
    fields: InvokeFields,
    perform: (signal: AbortSignal) => Promise<T>,
    done: (value: T) => CompletionFields,
  ): Promise<Recorded<T>> {
    const op = this.history.invoke(this.client, kind, fields);
    let value: T;
    try {
      value = await perform(AbortSignal.timeout(this.requestTimeoutMs));
    } catch (error) {
      if (isMqClientError(error)) {
        const completion = errorFields(error);
        if (isDefiniteFailure(kind, error)) {
          this.history.fail(op, completion);
          return { outcome: 'fail', error };
        }
        this.history.info(op, completion);
        return { outcome: 'info', error };
      }
      this.history.info(op, { error: describeError(error) });
      return { outcome: 'info', error };
    }
    this.history.ok(op, done(value));
    return { outcome: 'ok', value };
  }
}
