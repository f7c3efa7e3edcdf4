// `mq serve` as a process for tests: one durable member with the gateway inside, on a free
// loopback port, its data and log under a temp directory. Restartable on the same port and data.

import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterNode } from './cluster-node.js';
import { freePorts } from './free-ports.js';

export interface ServeProcessOptions {
  /** Directory for data and log; default a new temp directory (removed by `stop()`). */
  readonly rootDir?: string;
  readonly keepFiles?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  readonly nodeArgs?: readonly string[];
}

export class ServeProcess {
  private stopped = false;

  private constructor(
    /** The `mq serve` process (kill, pause, restart, wipe, metrics, tail). */
    readonly node: ClusterNode,
    readonly rootDir: string,
    private readonly removeRoot: boolean,
  ) {}

  /**
   * Starts `mq serve --data <root>/data --port <free> --host 127.0.0.1` and resolves once it
   * answers /healthz (it listens only after its member is ready). Rejects with its log tail.
   */
  static async start(options: ServeProcessOptions = {}): Promise<ServeProcess> {
    const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'mq-serve-')));
    await mkdir(rootDir, { recursive: true });
    const [port] = await freePorts(1);
    const dataDir = join(rootDir, 'data');
    const node = new ClusterNode({
      id: 'serve',
      kind: 'serve',
      httpPort: port!,
      dataDir,
      logPath: join(rootDir, 'serve.log'),
      args: () => ['serve', '--data', dataDir, '--port', String(port), '--host', '127.0.0.1'],
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
    });
    const removeRoot = options.rootDir === undefined && options.keepFiles !== true;
    const serve = new ServeProcess(node, rootDir, removeRoot);
    try {
      await node.start();
    } catch (error) {
      await serve.stop();
      throw error;
    }
    return serve;
  }

  /** `http://127.0.0.1:<port>/v1`. */
  get baseUrl(): string {
    return this.node.baseUrl;
  }

  /** Graceful stop, then the temp directory is removed (unless kept). Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.node.stop();
    if (this.removeRoot) await rm(this.rootDir, { recursive: true, force: true });
  }
}
