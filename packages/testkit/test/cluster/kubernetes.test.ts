// deploy/kubernetes as `kubectl apply -k` would create it, from the base and from every overlay:
// each object valid against the Kubernetes API schemas (kubernetes-models), the pods within the
// "restricted" Pod Security level, and the rules the cluster needs to run as shipped (image
// reference, Secrets, probes, grace, spread, disruption budgets, network policies, the gateway
// rate share, and members added with --join). manifests.test.ts ties the base to the CLI.

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Service } from 'kubernetes-models/v1';
import { parseGatewayArgs, parseMemberArgs } from '@spoolmq/cli';
import { REPO_ROOT } from '../../src/cluster/index.js';
import { kustomizeBuild, type K8sObject } from './kustomize-subset.js';

const BASE = `${REPO_ROOT}deploy/kubernetes`;
const OVERLAYS = readdirSync(`${BASE}/overlays`).sort();
const BUILDS: [string, K8sObject[]][] = [
  ['base', kustomizeBuild(BASE)],
  ...OVERLAYS.map((o): [string, K8sObject[]] => [`overlays/${o}`, kustomizeBuild(`${BASE}/overlays/${o}`)]),
];
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};
/** Volume types the "restricted" Pod Security level allows. */
const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
const HAND_OFF_SECONDS_DEFAULT = 10;
const MEMBER = { 'app.kubernetes.io/name': 'mq', 'app.kubernetes.io/component': 'member' };
const GATEWAY = { 'app.kubernetes.io/name': 'mq', 'app.kubernetes.io/component': 'gateway' };

const find = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o['kind'] === kind && o['metadata']?.['name'] === name);
  expect(found, `${kind} ${name}`).toBeDefined();
  return found!;
};
const workloads = (objects: K8sObject[]): K8sObject[] =>
  objects.filter((o) => o['kind'] === 'StatefulSet' || o['kind'] === 'Deployment');
const envValue = (container: K8sObject, name: string): K8sObject | undefined =>
  (container['env'] as K8sObject[]).find((e) => e['name'] === name);

/** The checks of the "restricted" Pod Security Standard that a manifest can fail. */
function expectRestricted(where: string, pod: K8sObject): void {
  expect(pod['hostNetwork'] ?? false, where).toBe(false);
  expect(pod['hostPID'] ?? false, where).toBe(false);
  expect(pod['hostIPC'] ?? false, where).toBe(false);
  expect(pod['securityContext']['runAsNonRoot'], where).toBe(true);
  expect(pod['securityContext']['runAsUser'], where).toBeGreaterThan(0);
  expect(pod['securityContext']['seccompProfile']['type'], where).toBe('RuntimeDefault');
  for (const volume of pod['volumes'] as K8sObject[]) {
    const type = Object.keys(volume).find((k) => k !== 'name')!;
    expect(RESTRICTED_VOLUMES, `${where}: volume ${volume['name']}`).toContain(type);
  }
  for (const container of pod['containers'] as K8sObject[]) {
    const context = container['securityContext'] as K8sObject;
    expect(context['allowPrivilegeEscalation'], where).toBe(false);
    expect(context['privileged'] ?? false, where).toBe(false);
    expect(context['capabilities']['drop'], where).toEqual(['ALL']);
    expect(context['capabilities']['add'] ?? [], where).toEqual([]);
    for (const port of container['ports'] as K8sObject[]) expect(port['hostPort'], where).toBeUndefined();
  }
}

describe.each(BUILDS)('deploy/kubernetes %s', (name, objects) => {
  const members = find(objects, 'StatefulSet', 'mq-member');
  const memberPod = members['spec']['template']['spec'] as K8sObject;
  const gateways = find(objects, 'Deployment', 'mq-gateway');
  const gatewayPod = gateways['spec']['template']['spec'] as K8sObject;

  it('is valid against the Kubernetes API schemas', () => {
    for (const object of objects) {
      const Model = MODELS[`${object['apiVersion']}/${object['kind']}`];
      expect(Model, `a model for ${object['apiVersion']} ${object['kind']}`).toBeDefined();
      expect(() => new Model!(object).validate(), `${object['kind']} ${object['metadata']['name']}`).not.toThrow();
    }
  });

  it('runs every pod at the restricted Pod Security level, with fsGroup for the volumes', () => {
    for (const workload of workloads(objects)) {
      const pod = workload['spec']['template']['spec'] as K8sObject;
      expectRestricted(`${name} ${workload['metadata']['name']}`, pod);
      expect(pod['securityContext']['fsGroup']).toBe(pod['securityContext']['runAsGroup']);
      expect(pod['automountServiceAccountToken']).toBe(false);
    }
  });

  it('names the image through kustomize, with a tag (and a registry outside dev)', () => {
    for (const workload of workloads(objects)) {
      const image = workload['spec']['template']['spec']['containers'][0]['image'] as string;
      expect(image).toMatch(/^[a-z0-9./-]+:[\w.-]+$/);
      if (name === 'overlays/prod' || name === 'overlays/five-members') expect(image).toContain('/');
    }
  });

  it('reads the admin token and the cluster certificates from Secrets', () => {
    const container = memberPod['containers'][0] as K8sObject;
    expect(envValue(container, 'MQ_ADMIN_TOKEN')?.['valueFrom']).toEqual({
      secretKeyRef: { name: 'mq-admin', key: 'token' },
    });
    for (const pod of [memberPod, gatewayPod]) {
      expect(pod['volumes']).toContainEqual({
        name: 'cluster-tls',
        secret: { secretName: 'mq-cluster-tls', defaultMode: 0o400 },
      });
    }
  });

  it('tells each gateway how many gateways share an account rate (MQ_GATEWAYS = replicas)', () => {
    const container = gatewayPod['containers'][0] as K8sObject;
    expect(Number(envValue(container, 'MQ_GATEWAYS')?.['value'])).toBe(gateways['spec']['replicas']);
  });

  it('probes startup, readiness and liveness, and gives members time to hand off', () => {
    for (const pod of [memberPod, gatewayPod]) {
      const container = pod['containers'][0] as K8sObject;
      expect(container['startupProbe']['httpGet']).toEqual({ path: '/healthz', port: 'http' });
      expect(container['readinessProbe']['httpGet']).toEqual({ path: '/readyz', port: 'http' });
      expect(container['livenessProbe']['httpGet']).toEqual({ path: '/healthz', port: 'http' });
    }
    // The hand-off's bound, then a graceful stop, well inside the grace period.
    expect(memberPod['terminationGracePeriodSeconds']).toBeGreaterThanOrEqual(3 * HAND_OFF_SECONDS_DEFAULT);
  });

  it('keeps members on distinct nodes (not in dev) and spreads them over zones', () => {
    const required = memberPod['affinity']?.['podAntiAffinity']?.['requiredDuringSchedulingIgnoredDuringExecution'];
    if (name === 'overlays/dev') {
      expect(required).toBeUndefined();
    } else {
      expect(required).toEqual([{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: MEMBER } }]);
    }
    const zones = (memberPod['topologySpreadConstraints'] as K8sObject[]).find(
      (c) => c['topologyKey'] === 'topology.kubernetes.io/zone',
    );
    expect(zones?.['labelSelector']).toEqual({ matchLabels: MEMBER });
    if (name !== 'base' && name !== 'overlays/dev') expect(zones?.['whenUnsatisfiable']).toBe('DoNotSchedule');
  });

  it('lets voluntary disruptions take one member or gateway at a time', () => {
    for (const [pdbName, labels] of [['mq-member', MEMBER], ['mq-gateway', GATEWAY]] as const) {
      const pdb = find(objects, 'PodDisruptionBudget', pdbName);
      expect(pdb['spec']['maxUnavailable']).toBe(1);
      expect(pdb['spec']['selector']).toEqual({ matchLabels: labels });
    }
    expect(members['spec']['template']['metadata']['labels']).toEqual(MEMBER);
    expect(gateways['spec']['template']['metadata']['labels']).toEqual(GATEWAY);
  });

  it('lets only members and gateways reach members, on their named ports', () => {
    const policy = find(objects, 'NetworkPolicy', 'mq-member');
    expect(policy['spec']['podSelector']).toEqual({ matchLabels: MEMBER });
    expect(policy['spec']['policyTypes']).toEqual(['Ingress']);
    const rules = policy['spec']['ingress'] as K8sObject[];
    const ports = (memberPod['containers'][0]['ports'] as K8sObject[]).map((p) => p['name']);
    for (const rule of rules) {
      expect(rule['from']).toEqual([{ podSelector: { matchLabels: MEMBER } }, { podSelector: { matchLabels: GATEWAY } }]);
      for (const port of rule['ports'] as K8sObject[]) expect(ports).toContain(port['port']);
    }
    const gatewayPolicy = find(objects, 'NetworkPolicy', 'mq-gateway');
    expect(gatewayPolicy['spec']['podSelector']).toEqual({ matchLabels: GATEWAY });
  });

  it('gives every member pod and gateway a valid command line over the same members', () => {
    const container = memberPod['containers'][0] as K8sObject;
    const env = (pod: string): Record<string, string> => {
      const values: Record<string, string> = {};
      for (const e of container['env'] as K8sObject[]) {
        if (e['value'] !== undefined) values[e['name']] = String(e['value']).replace(/\$\((\w+)\)/g, (_, v: string) => values[v] ?? '');
        else values[e['name']] = e['valueFrom']['fieldRef'] ? pod : 'a-secret-from-kubernetes';
      }
      return values;
    };
    const replicas = members['spec']['replicas'] as number;
    const pods = Array.from({ length: replicas }, (_, i) => `mq-member-${i}`);
    const [, ...rest] = container['args'] as string[];
    for (const pod of pods) {
      const options = parseMemberArgs(rest, env(pod))!;
      expect(Object.keys(options.peers).sort()).toEqual([...pods].sort());
      // Beyond the three founders a member must join, not found a cluster of its own.
      expect(options.join).toBe(replicas > 3);
    }
    const gateway = gatewayPod['containers'][0] as K8sObject;
    const gatewayEnv = Object.fromEntries((gateway['env'] as K8sObject[]).map((e) => [e['name'], String(e['value'])]));
    const gatewayOptions = parseGatewayArgs((gateway['args'] as string[]).slice(1), gatewayEnv)!;
    expect(gatewayOptions.members).toEqual(parseMemberArgs(rest, env(pods[0]!))!.peers);
  });
});
