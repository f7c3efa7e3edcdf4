// The docker-compose.yml cluster (a certs job, three members, a gateway) run from the project's
// image with testcontainers: one network where every container answers to its service name,
// named volumes that outlive the containers (`down` then `up` restarts the cluster from them),
// and the faults the scenarios inject: kill, pause, network cut, graceful restart.

import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  GenericContainer,
  StartedNetwork,
  Wait,
  getContainerRuntimeClient,
  type ContainerRuntimeClient,
  type StartedTestContainer,
  type WaitStrategy,
} from 'testcontainers';
import { readComposeFile, type ComposeFile, type ComposeService } from './compose-file.js';

/** Label on every container and volume of the suite: `scripts/ci/with-docker.sh` sweeps it. */
export const E2E_LABEL = 'org.spoolmq.e2e';
/** How long a container may take to start and pass its wait (members wait for peers). */
const STARTUP_TIMEOUT_MS = 90_000;
const MEMBER_LISTENING = /mq member \S+ listening/;
/** How long a container's log may take to read. */
const LOG_READ_MS = 5_000;

export class ComposeCluster {
  private network: StartedNetwork | undefined;
  private readonly containers = new Map<string, StartedTestContainer>();

  private constructor(
    /** Prefix of every name, as compose's project name. */
    readonly project: string,
    private readonly image: string,
    private readonly file: ComposeFile,
    private readonly client: ContainerRuntimeClient,
  ) {}

  /** Makes the named volumes and starts every service (`docker compose up`). */
  static async up(image: string): Promise<ComposeCluster> {
    const client = await getContainerRuntimeClient();
    const project = `mq-e2e-${randomBytes(4).toString('hex')}`;
    const cluster = new ComposeCluster(project, image, readComposeFile(), client);
    for (const volume of cluster.file.volumes) {
      await client.container.dockerode.createVolume({
        Name: cluster.volumeName(volume),
        Labels: { [E2E_LABEL]: project },
      });
    }
    try {
      await cluster.start();
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  /** The member services (those running `mq member`), in file order. */
  get members(): string[] {
    return this.file.services.filter((s) => s.command[0] === 'member').map((s) => s.name);
  }

  /** The member id (`MQ_ID`) of a member service. */
  memberId(service: string): string {
    return this.service(service).environment['MQ_ID']!;
  }

  /** The member service whose id is `id`. */
  serviceOf(id: string): string {
    const found = this.members.find((name) => this.memberId(name) === id);
    if (found === undefined) throw new Error(`no member service has MQ_ID ${id}`);
    return found;
  }

  /** The gateway's API as the host reaches it (compose publishes it on loopback). */
  get apiUrl(): string {
    const gateway = this.container('gateway');
    const port = this.service('gateway').publishedPorts[0]!;
    return `http://${gateway.getHost()}:${gateway.getMappedPort(port)}/v1`;
  }

  /** Starts every service in dependency order, on a fresh network, with the kept volumes. */
  async start(): Promise<void> {
    // Made here rather than with `new Network()` so that it carries the suite's label too.
    const name = `${this.project}_default`;
    const network = await this.client.network.create({
      Name: name,
      Driver: 'bridge',
      Labels: { [E2E_LABEL]: this.project },
    });
    this.network = new StartedNetwork(this.client, name, network);
    for (const service of this.file.services) {
      // Members start together: none is ready before a quorum is up.
      if (service.command[0] === 'member' && this.containers.has(service.name)) continue;
      if (service.command[0] === 'member') {
        const peers = this.file.services.filter((s) => s.command[0] === 'member');
        const started = await Promise.allSettled(peers.map((s) => this.startService(s)));
        started.forEach((r, i) => {
          if (r.status === 'fulfilled') this.containers.set(peers[i]!.name, r.value);
        });
        const failed = started.find((r) => r.status === 'rejected');
        if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      } else {
        this.containers.set(service.name, await this.startService(service));
      }
    }
  }

  /**
   * `docker compose down`: every container stopped gracefully and removed; volumes kept. As
   * compose, dependents first (the gateway), then the members together.
   */
  async down(): Promise<void> {
    const names = [...this.containers.keys()];
    const members = new Set(this.members);
    for (const name of names.filter((n) => !members.has(n)).reverse()) await this.stop(name);
    await Promise.all(names.filter((n) => members.has(n)).map((name) => this.stop(name)));
    await this.network?.stop();
    this.network = undefined;
  }

  private async stop(name: string): Promise<void> {
    const timeout = this.service(name).stopGraceMs;
    await this.containers.get(name)!.stop({ timeout, remove: true, removeVolumes: true });
    this.containers.delete(name);
  }

  /** `down`, then the volumes removed too (`docker compose down -v`). */
  async destroy(): Promise<void> {
    try {
      for (const container of this.containers.values()) {
        const paused = this.client.container.dockerode.getContainer(container.getId());
        await paused.unpause().catch(() => {});
      }
      await this.down();
    } finally {
      // Whatever a failed start left (a container that never passed its wait is not tracked).
      const dockerode = this.client.container.dockerode;
      const left = await dockerode.listContainers({
        all: true,
        filters: { label: [`${E2E_LABEL}=${this.project}`] },
      });
      for (const info of left) {
        await dockerode.getContainer(info.Id).remove({ force: true, v: true });
      }
      for (const network of await dockerode.listNetworks({
        filters: { label: [`${E2E_LABEL}=${this.project}`] },
      })) {
        await dockerode.getNetwork(network.Id).remove();
      }
      for (const volume of this.file.volumes) {
        await dockerode.getVolume(this.volumeName(volume)).remove().catch(() => {});
      }
    }
  }

  /** `docker kill`: SIGKILL, no hand-off, no flush beyond what was fsynced. */
  async kill(service: string): Promise<void> {
    await this.dockerode(service).kill();
  }

  /** Starts a killed or stopped service again (same container, same volume). */
  async revive(service: string): Promise<void> {
    await this.container(service).restart({ timeout: 0 });
  }

  /** `docker restart`: SIGTERM, up to its `stop_grace_period` to stop, then started again. */
  async restart(service: string): Promise<void> {
    await this.container(service).restart({ timeout: this.service(service).stopGraceMs });
  }

  async pause(service: string): Promise<void> {
    await this.dockerode(service).pause();
  }

  async unpause(service: string): Promise<void> {
    await this.dockerode(service).unpause();
  }

  /** Cuts a service off the cluster's network (`docker network disconnect`). */
  async disconnect(service: string): Promise<void> {
    await this.dockerNetwork().disconnect({ Container: this.container(service).getId() });
  }

  /** Puts it back under its service name (`docker network connect --alias`). */
  async reconnect(service: string): Promise<void> {
    await this.dockerNetwork().connect({
      Container: this.container(service).getId(),
      EndpointConfig: { Aliases: [service] },
    });
  }

  /** `mq admin ARGS` inside a member (its admin API listens on the container's loopback). */
  admin(service: string, args: readonly string[]): Promise<string> {
    return this.cli(service, ['admin', '--token-file', '/data/admin-token', ...args]);
  }

  /** `mq ARGS` run inside a service's container; its standard output, trimmed. */
  async cli(service: string, args: readonly string[]): Promise<string> {
    const command = ['node', 'packages/cli/dist/main.js', ...args];
    const result = await this.container(service).exec(command);
    if (result.exitCode !== 0) {
      const how = `exit ${result.exitCode}: ${result.output}`;
      throw new Error(`mq ${args.join(' ')} in ${service}: ${how}`);
    }
    return result.stdout.trim();
  }

  /**
   * The member service that `ask` sees as the primary of `account`'s `spool` (`mq admin
   * cluster`), or undefined while it knows none.
   */
  async primary(account: string, spool: string, ask: string): Promise<string | undefined> {
    const view = JSON.parse(await this.admin(ask, ['cluster'])) as {
      spools: { account: string | null; name: string; primary: string | null }[];
    };
    const found = view.spools.find((s) => s.account === account && s.name === spool);
    return found?.primary ? this.serviceOf(found.primary) : undefined;
  }

  /** Writes every running service's whole log into `dir` (for a failed scenario). */
  async saveLogs(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    for (const [name, container] of this.containers) {
      const stream = await container.logs();
      const chunks: string[] = [];
      await new Promise<void>((resolve) => {
        stream.on('data', (chunk: Buffer | string) => chunks.push(String(chunk)));
        stream.on('end', resolve);
        setTimeout(resolve, LOG_READ_MS).unref();
      });
      writeFileSync(join(dir, `${name}.log`), chunks.join(''));
    }
  }

  private async startService(service: ComposeService): Promise<StartedTestContainer> {
    // Not compose's healthchecks: a `node -e` every 5 s in four containers costs a quarter of a
    // core here, and the waits below say when a service is up (manifests.test.ts checks them).
    const container = new GenericContainer(this.image)
      .withName(`${this.project}-${service.name}`)
      .withLabels({ [E2E_LABEL]: this.project })
      .withNetwork(this.network!)
      .withNetworkAliases(service.name)
      .withEntrypoint([...service.entrypoint])
      .withCommand([...service.command])
      .withEnvironment({ ...service.environment })
      .withBindMounts(
        service.volumes.map((v) => ({
          source: this.volumeName(v.volume),
          target: v.target,
          mode: v.readOnly ? ('ro' as const) : ('rw' as const),
        })),
      )
      .withExposedPorts(...service.publishedPorts)
      .withStartupTimeout(STARTUP_TIMEOUT_MS)
      .withWaitStrategy(this.waitFor(service));
    return container.start();
  }

  /** A job others wait on must exit 0; the gateway must be ready; a member must listen. */
  private waitFor(service: ComposeService): WaitStrategy {
    const awaitedAsJob = this.file.services.some((s) =>
      s.dependsOn.some((d) => d.service === service.name && d.completed),
    );
    if (awaitedAsJob) return Wait.forOneShotStartup();
    if (service.publishedPorts.length > 0) {
      return Wait.forHttp('/readyz', service.publishedPorts[0]!).forStatusCode(200);
    }
    return Wait.forLogMessage(MEMBER_LISTENING);
  }

  private service(name: string): ComposeService {
    const found = this.file.services.find((s) => s.name === name);
    if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
    return found;
  }

  private container(name: string): StartedTestContainer {
    const found = this.containers.get(name);
    if (found === undefined) throw new Error(`service ${name} is not running`);
    return found;
  }

  private dockerode(name: string) {
    return this.client.container.dockerode.getContainer(this.container(name).getId());
  }

  private dockerNetwork() {
    if (this.network === undefined) throw new Error('the cluster is down');
    return this.client.container.dockerode.getNetwork(this.network.getId());
  }

  private volumeName(volume: string): string {
    return `${this.project}_${volume}`;
  }
}
