// `mq serve` as a process for tests: one durable member with the gateway inside, on a free
// loopback port, its data and log under a temp directory. Restartable on the same port and data.

import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminClient, randomAdminToken } from './admin-client.js';
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
  private testKey: Promise<string> | null = null;

  private constructor(
    /** The `mq serve` process (kill, pause, restart, wipe, metrics, tail). */
    readonly node: ClusterNode,
    readonly rootDir: string,
    private readonly removeRoot: boolean,
    /** Its admin API (MQ_ADMIN_TOKEN set by the harness). */
    readonly admin: AdminClient,
  ) {}

  /** An API key of the test account (created once). */
  apiKey(): Promise<string> {
    if (this.testKey === null) {
      this.testKey = this.admin.testKey();
      this.testKey.catch(() => {
        this.testKey = null;
      });
    }
    return this.testKey;
  }

  /**
   * Starts `mq serve --data <root>/data --port <free> --host 127.0.0.1` and resolves once it
   * answers /healthz (it listens only after its member is ready). Rejects with its log tail.
   */
  static async start(options: ServeProcessOptions = {}): Promise<ServeProcess> {
    const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'mq-serve-')));
    await mkdir(rootDir, { recursive: true });
    const [port, adminPort] = await freePorts(2);
    const dataDir = join(rootDir, 'data');
    const token = randomAdminToken();
    const node = new ClusterNode({
      id: 'serve',
      kind: 'serve',
      httpPort: port!,
      dataDir,
      logPath: join(rootDir, 'serve.log'),
      args: () => [
        ...['serve', '--data', dataDir, '--port', String(port), '--host', '127.0.0.1'],
        ...['--admin-port', String(adminPort), '--admin-host', '127.0.0.1'],
      ],
      env: { ...options.env, MQ_ADMIN_TOKEN: token },
      admin: { port: adminPort!, token },
      ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
    });
    const removeRoot = options.rootDir === undefined && options.keepFiles !== true;
    const admin = new AdminClient(`http://127.0.0.1:${adminPort}`, token);
    const serve = new ServeProcess(node, rootDir, removeRoot, admin);
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
