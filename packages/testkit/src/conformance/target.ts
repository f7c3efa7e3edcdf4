// What the conformance suite needs to know about the server under test. The suite is written
// from the interface and the decisions alone; capabilities carry only what the spec leaves to
// the deployment (plan limits, whether keys are checked).

/** Deployment facts the suite cannot learn from the API. Every field has the local default. */
export interface ConformanceCapabilities {
  /** The local in-memory variant accepts any bearer key. Default true. */
  readonly anyKeyAccepted: boolean;
  /** Plan retention limit in seconds. Default 1,209,600 (14 days). */
  readonly retentionLimitSeconds: number;
  /** Retention a queue gets when create names none, in seconds. Default 345,600 (4 days). */
  readonly defaultRetentionSeconds: number;
  /** Message size limit in bytes (413 above it). Default 1,048,576 (1 MiB). */
  readonly messageSizeLimitBytes: number;
  /** `/metrics` answers without an Authorization header (loopback binds). Default true. */
  readonly metricsOpen: boolean;
  /** Plan maximum of queues on a spool (403 queue_limit past it). Default 1,000. */
  readonly queueLimit: number;
}

export interface ConformanceTarget {
  /** Service base address including the version segment, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  /** A spool that exists and that `apiKey` may use. */
  readonly spool: string;
  /** Root for `/healthz`, `/readyz`, `/metrics`; default: `baseUrl` without its `/v1`. */
  readonly rootUrl?: string;
  readonly capabilities?: Partial<ConformanceCapabilities>;
  /** A queue name not used before on this target: 1-63 chars of `[A-Za-z0-9_:-]`, <= 40 long. */
  newQueueName(): string;
}

export const localCapabilities: ConformanceCapabilities = {
  anyKeyAccepted: true,
  retentionLimitSeconds: 1_209_600,
  defaultRetentionSeconds: 345_600,
  messageSizeLimitBytes: 1_048_576,
  metricsOpen: true,
  queueLimit: 1_000,
};

/** The target's capabilities with the local variant's defaults filled in. */
export function capabilitiesOf(target: ConformanceTarget): ConformanceCapabilities {
  return { ...localCapabilities, ...target.capabilities };
}

/** `rootUrl`, or `baseUrl` with its trailing `/v1` removed. */
export function rootUrlOf(target: ConformanceTarget): string {
  if (target.rootUrl !== undefined) return target.rootUrl.replace(/\/$/, '');
  return target.baseUrl.replace(/\/$/, '').replace(/\/v1$/, '');
}
