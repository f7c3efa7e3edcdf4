// The part of kustomize that deploy/kubernetes uses, so a test can check what `kubectl apply -k`
// would create from the base and from each overlay: `resources` (files and directories),
// `images` (name -> newName:newTag), `replicas`, and JSON 6902 `patches` (add, remove, replace)
// aimed by kind and name. Any other field fails the build, so nothing escapes the checks.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

/** A Kubernetes object as parsed: shapes are checked by the tests themselves. */
export type K8sObject = Record<string, any>;

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'images', 'replicas', 'patches']);

function readObjects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.join('; ')}`);
    return doc.toJS() as K8sObject;
  });
}

/** Splits a JSON pointer (RFC 6901) into its keys. */
function pointer(path: string): string[] {
  if (!path.startsWith('/')) throw new Error(`patch path '${path}' is not a JSON pointer`);
  return path.slice(1).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Applies one JSON 6902 operation in place; a path that does not exist fails, as in kustomize. */
function applyOperation(target: K8sObject, op: { op: string; path: string; value?: unknown }): void {
  const keys = pointer(op.path);
  const last = keys.pop()!;
  let parent: any = target;
  for (const key of keys) {
    parent = parent?.[Array.isArray(parent) ? Number(key) : key];
    if (parent === undefined) throw new Error(`patch ${op.op} ${op.path}: no such path`);
  }
  const exists = Array.isArray(parent) ? Number(last) < parent.length : last in parent;
  if (op.op === 'add') {
    if (Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, op.value);
    else parent[last] = op.value;
  } else if (op.op === 'replace' || op.op === 'remove') {
    if (!exists) throw new Error(`patch ${op.op} ${op.path}: no such path`);
    if (op.op === 'replace') parent[Array.isArray(parent) ? Number(last) : last] = op.value;
    else if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else {
    throw new Error(`patch op '${op.op}' is not supported here`);
  }
}

function setImages(objects: K8sObject[], images: K8sObject[]): void {
  for (const object of objects) {
    const pod = object['spec']?.['template']?.['spec'];
    for (const container of [...(pod?.['containers'] ?? []), ...(pod?.['initContainers'] ?? [])]) {
      const name = String(container['image']).replace(/[:@].*$/, '');
      const image = images.find((i) => i['name'] === name);
      if (image === undefined) continue;
      container['image'] = `${image['newName'] ?? name}${image['newTag'] ? `:${image['newTag']}` : ''}`;
    }
  }
}

/** The objects `kubectl apply -k dir` would create (for the subset above). */
export function kustomizeBuild(dir: string): K8sObject[] {
  const kustomization = parseYaml(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as K8sObject;
  for (const key of Object.keys(kustomization)) {
    if (!SUPPORTED.has(key)) throw new Error(`${dir}: kustomization field '${key}' is not checked`);
  }
  const objects: K8sObject[] = [];
  for (const resource of (kustomization['resources'] ?? []) as string[]) {
    const path = join(dir, resource);
    objects.push(...(statSync(path).isDirectory() ? kustomizeBuild(path) : readObjects(path)));
  }
  for (const patch of (kustomization['patches'] ?? []) as K8sObject[]) {
    const { kind, name } = patch['target'] as { kind: string; name: string };
    const matched = objects.filter((o) => o['kind'] === kind && o['metadata']?.['name'] === name);
    if (matched.length !== 1) throw new Error(`${dir}: patch target ${kind}/${name} matched ${matched.length}`);
    for (const op of parseYaml(patch['patch'] as string) as { op: string; path: string }[]) {
      applyOperation(matched[0]!, op);
    }
  }
  for (const { name, count } of (kustomization['replicas'] ?? []) as K8sObject[]) {
    const matched = objects.filter((o) => o['metadata']?.['name'] === name && o['spec']?.['replicas'] !== undefined);
    if (matched.length !== 1) throw new Error(`${dir}: replicas for ${name} matched ${matched.length}`);
    matched[0]!['spec']['replicas'] = count;
  }
  setImages(objects, (kustomization['images'] ?? []) as K8sObject[]);
  return objects;
}
