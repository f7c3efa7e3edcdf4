// One process of a harness-run deployment: a member (`mq member`), a gateway (`mq gateway`) or
// a single-node server (`mq serve`), on fixed loopback ports chosen before it first starts, so a
// restart comes back on the same addresses with the same data directory.

import { rm } from 'node:fs/promises';
import {
  type ExitStatus,
  MqProcess,
  PROCESS_START_TIMEOUT_MS,
  answers200,
  logTail,
} from './mq-process.js';

export type NodeKind = 'member' | 'gateway' | 'serve';

export interface ClusterNodeOptions {
  readonly id: string;
  readonly kind: NodeKind;
  /** Port of its HTTP listener (/healthz, /readyz, /metrics, /v1). */
  readonly httpPort: number;
  /** Members: the gRPC address it binds, `127.0.0.1:port`. */
  readonly grpcAddress?: string;
  /** Members and `mq serve`: its storage directory. */
  readonly dataDir?: string;
  readonly logPath: string;
  /** The command line after the entry point, built afresh at every start (peers may change). */
  readonly args: () => readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly nodeArgs?: readonly string[];
  /**
   * Members and `mq serve`: their admin listener, whose /metrics (behind the token) carries what
   * names spools and accounts (Raft groups, replicas, depths); `metrics()` reads both.
   */
  readonly admin?: { readonly port: number; readonly token: string };
}

const REQUEST_TIMEOUT_MS = 2_000;

export class ClusterNode {
  readonly id: string;
  readonly kind: NodeKind;
  readonly httpPort: number;
  /** `http://127.0.0.1:<httpPort>` (probes and metrics). */
  readonly rootUrl: string;
  /** `http://127.0.0.1:<httpPort>/v1`. */
  readonly baseUrl: string;
  readonly grpcAddress: string | undefined;
  readonly dataDir: string | undefined;
  readonly logPath: string;
  private readonly options: ClusterNodeOptions;
  /** The current (or last) process; null before the first start. */
  private processValue: MqProcess | null = null;

  constructor(options: ClusterNodeOptions) {
    this.options = options;
    this.id = options.id;
    this.kind = options.kind;
    this.httpPort = options.httpPort;
    this.rootUrl = `http://127.0.0.1:${options.httpPort}`;
    this.baseUrl = `${this.rootUrl}/v1`;
    this.grpcAddress = options.grpcAddress;
    this.dataDir = options.dataDir;
    this.logPath = options.logPath;
  }

  /** `member n1`, `gateway gateway`, `serve serve`: for messages. */
  get label(): string {
    return `${this.kind} ${this.id}`;
  }

  get alive(): boolean {
    return this.processValue?.alive ?? false;
  }

  get paused(): boolean {
    return this.processValue?.isPaused ?? false;
  }

  get pid(): number | undefined {
    return this.processValue?.pid;
  }

  /** Resolves when the current process exits (at once before the first start). */
  get exited(): Promise<ExitStatus> {
    return this.processValue?.exited ?? Promise.resolve({ code: null, signal: null });
  }

  /**
   * Starts the process (with its command line as of now) and resolves once /healthz answers.
   * Rejects with the log tail if it exits or stays silent for `timeoutMs`. Throws if running.
   */
  async start(timeoutMs = PROCESS_START_TIMEOUT_MS): Promise<void> {
    if (this.alive) throw new Error(`${this.label} is already running`);
    this.processValue = this.newProcess();
    await this.processValue.start(timeoutMs);
  }

  /** Sends `signal` (default SIGKILL) and resolves once the process has exited. */
  kill(signal: 'SIGKILL' | 'SIGTERM' | 'SIGINT' = 'SIGKILL'): Promise<ExitStatus> {
    return this.processValue?.kill(signal) ?? this.exited;
  }

  /** Graceful stop (SIGTERM, SIGKILL after the grace period). */
  stop(): Promise<ExitStatus> {
    return this.processValue?.stop() ?? this.exited;
  }

  /** SIGSTOP. Throws when not running. */
  pause(): void {
    this.running().pause();
  }

  /** SIGCONT. Throws when not running. */
  resume(): void {
    this.running().resume();
  }

  /** Stops the process gracefully if it runs, then starts it again on the same ports and data. */
  async restart(timeoutMs = PROCESS_START_TIMEOUT_MS): Promise<void> {
    if (this.alive) await this.stop();
    await this.start(timeoutMs);
  }

  /**
   * Deletes the data directory: the disk of this member is lost. Throws when the process runs
   * (stop or kill it first) or the node has no data.
   */
  async wipe(): Promise<void> {
    if (this.alive) throw new Error(`${this.label} must be stopped before its data is wiped`);
    if (this.dataDir === undefined) throw new Error(`${this.label} has no data directory`);
    await rm(this.dataDir, { recursive: true, force: true });
  }

  /** GET /readyz answers 200 (false when not running, paused or not ready). */
  async isReady(): Promise<boolean> {
    if (!this.alive || this.paused) return false;
    return answers200(`${this.rootUrl}/readyz`);
  }

  /**
   * The /metrics text, followed for a member or `mq serve` by its admin listener's. Rejects
   * when the process does not answer.
   */
  async metrics(): Promise<string> {
    const open = await this.fetchMetrics(`${this.rootUrl}/metrics`, {});
    const admin = this.options.admin;
    if (admin === undefined) return open;
    const headers = { authorization: `Bearer ${admin.token}` };
    return open + (await this.fetchMetrics(`http://127.0.0.1:${admin.port}/metrics`, headers));
  }

  private async fetchMetrics(url: string, headers: Record<string, string>): Promise<string> {
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const response = await fetch(url, { signal, headers });
    const text = await response.text();
    if (response.status !== 200) {
      throw new Error(`${this.label}: ${url} answered ${response.status}`);
    }
    return text;
  }

  /** The last `lines` lines of its log (all its runs append to one file). */
  tail(lines = 40): string {
    return logTail(this.logPath, lines);
  }

  private running(): MqProcess {
    if (this.processValue === null || !this.alive) throw new Error(`${this.label} is not running`);
    return this.processValue;
  }

  private newProcess(): MqProcess {
    const options = this.options;
    return new MqProcess({
      name: `${options.kind} ${options.id}`,
      args: options.args(),
      logPath: options.logPath,
      healthUrl: `http://127.0.0.1:${options.httpPort}/healthz`,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
    });
  }
}
