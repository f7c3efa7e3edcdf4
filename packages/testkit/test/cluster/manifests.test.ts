// The deployment files, checked where no container runtime is needed: docker-compose.yml and
// deploy/kubernetes/*.yaml are parsed, every command line and environment they give a process is
// run through the CLI's own parsers (so a renamed flag or variable fails here), and ports,
// probes, peers and data volumes are checked for consistency. The Dockerfile's entry point and
// default command go through the same parsers.

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseGatewayArgs, parseMemberArgs, parseServeArgs } from '@spoolmq/cli';
import { REPO_ROOT } from '../../src/cluster/index.js';

/** What a variable read from a Secret holds here (an admin token needs 16 characters at least). */
const SECRET_VALUE = 'a-secret-from-kubernetes';

/** A parsed YAML document: shapes are checked by the assertions themselves. */
type Doc = Record<string, any>;

const read = (path: string): string => readFileSync(`${REPO_ROOT}${path}`, 'utf8');
const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));
const hostOf = (address: string): string => address.slice(0, address.lastIndexOf(':'));

/** A process's command line: the image's entry point runs `mq`, so args start at the command. */
function commandOf(args: readonly string[]): { command: string; rest: string[] } {
  const [command, ...rest] = args;
  expect(command, 'a command').toBeDefined();
  return { command: command!, rest };
}

describe('deploy/Dockerfile', () => {
  const lines = read('deploy/Dockerfile').split('\n');
  const instruction = (name: string): string[] => {
    const line = lines.find((l) => l.startsWith(`${name} `));
    expect(line, name).toBeDefined();
    return JSON.parse(line!.slice(name.length + 1)) as string[];
  };

  it('runs the launcher, and its default command is a valid `mq serve` on /data', () => {
    expect(instruction('ENTRYPOINT')).toEqual(['packages/cli/bin/mq']);
    const { command, rest } = commandOf(instruction('CMD'));
    expect(command).toBe('serve');
    const serve = parseServeArgs(rest, {});
    expect(serve).toMatchObject({ dataDir: '/data', host: '0.0.0.0', port: 8080 });
    expect(lines).toContain('VOLUME ["/data"]');
    const exposed = lines.find((l) => l.startsWith('EXPOSE '))!.split(' ').slice(1).map(Number);
    expect(exposed).toEqual(expect.arrayContaining([8080, 7001]));
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as Doc;
  const services = compose['services'] as Record<string, Doc>;
  const memberNames = Object.keys(services).filter((name) => services[name]!['command']?.[0] === 'member');

  it('has three members and a gateway, all built from the one Dockerfile', () => {
    expect(memberNames).toHaveLength(3);
    expect(services['gateway']?.['command']).toEqual(['gateway']);
    for (const name of [...memberNames, 'gateway']) {
      expect(services[name]!['build']?.['dockerfile'], name).toBe('deploy/Dockerfile');
      expect(services[name]!['image'], name).toBe('mq:latest');
    }
  });

  it('runs the launcher with the node flags of co-located processes, as npm run cluster does', async () => {
    const { COLOCATED_NODE_FLAGS } = await import('../../../../scripts/colocated-node-flags.mjs');
    for (const name of [...memberNames, 'gateway']) {
      expect(services[name]!['entrypoint'], name).toEqual(['packages/cli/bin/mq']);
      expect(services[name]!['environment']['MQ_NODE_FLAGS'], name).toBe(COLOCATED_NODE_FLAGS.join(' '));
    }
  });

  it('gives each member a valid command line, its own id, the others as peers and a data volume', () => {
    const ids = new Set<string>();
    for (const name of memberNames) {
      const service = services[name]!;
      const { rest } = commandOf(service['command'] as string[]);
      const options = parseMemberArgs(rest, service['environment'] as Record<string, string>)!;
      ids.add(options.id);
      // Peers are addressed by compose service name, on the port every member listens on.
      expect(options.peers[options.id]).toBe(`${name}:${portOf(options.listen)}`);
      expect(Object.values(options.peers).map(hostOf).sort()).toEqual([...memberNames].sort());
      const volumes = (service['volumes'] as string[]).map((v) => v.split(':'));
      expect(volumes.some(([source, target]) => target === options.dataDir && compose['volumes']?.[source!] !== undefined), name).toBe(true);
      // The healthcheck probes the member's own HTTP port.
      expect((service['healthcheck']['test'] as string[]).join(' ')).toContain(`127.0.0.1:${options.port}/healthz`);
      expect(options.host).toBe('0.0.0.0');
      // Mutual TLS with its own certificate, made by the certs service before it starts.
      expect(options.clusterTls).toEqual({
        mode: 'tls',
        caFile: '/certs/ca.crt',
        certFile: `/certs/member-${options.id}.crt`,
        keyFile: `/certs/member-${options.id}.key`,
        crlFile: null,
      });
      expect(service['depends_on']).toEqual({ certs: { condition: 'service_completed_successfully' } });
    }
    expect(ids.size).toBe(memberNames.length);
  });

  it('points the gateway at the members and publishes its port on loopback', () => {
    const gateway = services['gateway']!;
    const env = gateway['environment'] as Record<string, string>;
    const options = parseGatewayArgs(commandOf(gateway['command'] as string[]).rest, env)!;
    const member = services[memberNames[0]!]!;
    const memberOptions = parseMemberArgs([], member['environment'] as Record<string, string>)!;
    expect(options.members).toEqual(memberOptions.peers);
    expect(options.clusterTls).toMatchObject({ mode: 'tls', certFile: '/certs/gateway-gateway.crt' });
    expect(gateway['ports']).toEqual([`127.0.0.1:8080:${options.port}`]);
    expect(options.host).toBe('0.0.0.0');
    expect([...(gateway['depends_on'] as string[])].sort()).toEqual([...memberNames].sort());
    expect((gateway['healthcheck']['test'] as string[]).join(' ')).toContain(`127.0.0.1:${options.port}/readyz`);
  });
});

describe('deploy/kubernetes', () => {
  const dir = 'deploy/kubernetes/';
  const files = readdirSync(`${REPO_ROOT}${dir}`).filter((f) => f.endsWith('.yaml'));
  const docs: Doc[] = files.flatMap((file) =>
    parseAllDocuments(read(`${dir}${file}`)).map((doc) => {
      expect(doc.errors, file).toEqual([]);
      return doc.toJS() as Doc;
    }),
  );
  const find = (kind: string, name: string): Doc => {
    const doc = docs.find((d) => d['kind'] === kind && d['metadata']?.['name'] === name);
    expect(doc, `${kind} ${name}`).toBeDefined();
    return doc!;
  };
  const statefulSet = find('StatefulSet', 'mq-member');
  const memberPod = statefulSet['spec']['template']['spec'] as Doc;
  const memberContainer = memberPod['containers'][0] as Doc;
  const gatewayDeployment = find('Deployment', 'mq-gateway');
  const gatewayContainer = gatewayDeployment['spec']['template']['spec']['containers'][0] as Doc;

  /** A container's environment as a pod named `podName` sees it (fieldRef metadata.name). */
  function envOf(container: Doc, podName: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const entry of container['env'] as Doc[]) {
      // Kubernetes expands $(NAME) from variables defined before it.
      const expand = (value: string): string => value.replace(/\$\((\w+)\)/g, (_, name: string) => env[name] ?? '');
      if (entry['value'] !== undefined) env[entry['name']] = expand(String(entry['value']));
      else if (entry['valueFrom']?.['fieldRef']?.['fieldPath'] === 'metadata.name') env[entry['name']] = podName;
      else if (entry['valueFrom']?.['secretKeyRef'] !== undefined) env[entry['name']] = SECRET_VALUE;
      else throw new Error(`unsupported env source for ${entry['name']}`);
    }
    return env;
  }
  const portNamed = (container: Doc, name: string): number =>
    (container['ports'] as Doc[]).find((p) => p['name'] === name)!['containerPort'] as number;

  it('kustomization lists every manifest', () => {
    const kustomization = parseYaml(read(`${dir}kustomization.yaml`)) as Doc;
    const listed = [...(kustomization['resources'] as string[])].sort();
    expect(listed).toEqual(files.filter((f) => f !== 'kustomization.yaml').sort());
  });

  it('gives every member pod a valid command line whose peers are the StatefulSet pods', () => {
    const replicas = statefulSet['spec']['replicas'] as number;
    const service = statefulSet['spec']['serviceName'] as string;
    const raftPort = portNamed(memberContainer, 'raft');
    const httpPort = portNamed(memberContainer, 'http');
    const pods = Array.from({ length: replicas }, (_, i) => `${statefulSet['metadata']['name']}-${i}`);
    for (const pod of pods) {
      const options = parseMemberArgs(commandOf(memberContainer['args']).rest, envOf(memberContainer, pod))!;
      expect(options.id).toBe(pod);
      // Its own certificate from the cluster's Secret: mutual TLS on every link.
      expect(options.clusterTls).toEqual({
        mode: 'tls',
        caFile: '/etc/mq/tls/ca.crt',
        certFile: `/etc/mq/tls/member-${pod}.crt`,
        keyFile: `/etc/mq/tls/member-${pod}.key`,
        // The CA's revocation list from the same Secret, re-read when the Secret changes.
        crlFile: '/etc/mq/tls/revoked.crl',
      });
      expect(memberContainer['volumeMounts']).toContainEqual(
        expect.objectContaining({ name: 'cluster-tls', mountPath: '/etc/mq/tls' }),
      );
      expect(memberPod['volumes']).toContainEqual({
        name: 'cluster-tls',
        secret: { secretName: 'mq-cluster-tls', defaultMode: 0o400 },
      });
      expect(options.peers).toEqual(Object.fromEntries(pods.map((p) => [p, `${p}.${service}:${raftPort}`])));
      expect(portOf(options.listen)).toBe(raftPort);
      expect(options.port).toBe(httpPort);
      expect(options.host).toBe('0.0.0.0');
      const mount = (memberContainer['volumeMounts'] as Doc[]).find((m) => m['mountPath'] === options.dataDir);
      expect(mount, 'a volume mounted at the data directory').toBeDefined();
      const claims = (statefulSet['spec']['volumeClaimTemplates'] as Doc[]).map((c) => c['metadata']['name']);
      expect(claims).toContain(mount!['name']);
    }
  });

  it('probes members and gateways on /readyz and /healthz of their HTTP port', () => {
    for (const container of [memberContainer, gatewayContainer]) {
      expect(container['readinessProbe']['httpGet']).toEqual({ path: '/readyz', port: 'http' });
      expect(container['livenessProbe']['httpGet']).toEqual({ path: '/healthz', port: 'http' });
      expect(portNamed(container, 'http')).toBeGreaterThan(0);
    }
  });

  it('exposes members through a headless Service with matching ports', () => {
    const headless = find('Service', statefulSet['spec']['serviceName'] as string);
    expect(headless['spec']['clusterIP']).toBe('None');
    // Peers must resolve before they are ready: members become ready only with a quorum.
    expect(headless['spec']['publishNotReadyAddresses']).toBe(true);
    for (const port of headless['spec']['ports'] as Doc[]) {
      expect(port['port']).toBe(portNamed(memberContainer, port['targetPort'] as string));
    }
    expect(headless['spec']['selector']).toEqual(statefulSet['spec']['template']['metadata']['labels']);
  });

  it('points gateways at the member pods and serves them through the mq Service', () => {
    const options = parseGatewayArgs(commandOf(gatewayContainer['args']).rest, envOf(gatewayContainer, 'mq-gateway-x'))!;
    const memberOptions = parseMemberArgs([], envOf(memberContainer, 'mq-member-0'))!;
    expect(options.members).toEqual(memberOptions.peers);
    expect(options.clusterTls).toMatchObject({ mode: 'tls', certFile: '/etc/mq/tls/gateway-gateway.crt' });
    expect(options.port).toBe(portNamed(gatewayContainer, 'http'));
    expect(options.host).toBe('0.0.0.0');
    const service = find('Service', 'mq');
    expect(service['spec']['selector']).toEqual(gatewayDeployment['spec']['template']['metadata']['labels']);
    expect(service['spec']['ports']).toEqual([{ name: 'http', port: 8080, targetPort: 'http' }]);
  });
});
