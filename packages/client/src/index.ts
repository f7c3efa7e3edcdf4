export * from './types.js';
export * from './errors.js';
export { MqClient, decodeText, sleepMs, PAGES_MAX } from './client.js';
export type {
  MqClientOptions,
  CallOptions,
  ListOptions,
  StatsOptions,
  ListMessagesOptions,
  SendOptions,
  ReceiveOptions,
  DelayMsOptions,
  RecoverOptions,
  AckAndSendOptions,
} from './client.js';
export type { FetchFn } from './http.js';
export { normalizeBaseUrl } from './http.js';
export {
  classifySendFailure,
  nextSendRetryDelayMs,
  backoffDelayMs,
  DEFAULT_SEND_RETRY_POLICY,
  DEDUP_WINDOW_MARGIN_MS,
} from './send-retry.js';
export type { SendFailureClass, SendRetryPolicy, RetryContext } from './send-retry.js';
export { formatDelay, DELAY_MS_MAX } from './duration.js';
export { runWorker, WORKER_CONCURRENCY_MAX, RENEW_INTERVAL_MS_MIN } from './worker.js';
export type {
  Handler,
  HandlerContext,
  WorkerOptions,
  WorkerCounts,
  WorkerStage,
} from './worker.js';
