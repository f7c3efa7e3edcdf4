// docker-compose.yml read as the e2e suite runs it: the services, in start order, with what each
// container gets (entry point, command, environment, volumes, published ports, stop grace).
// Debian ships compose v1 only, so the suite starts these services itself with testcontainers;
// reading them from the file keeps the suite on the topology users run.

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { REPO_ROOT } from './repo-root.js';

export interface VolumeMount {
  /** The compose volume's name (`member1-data`). */
  readonly volume: string;
  readonly target: string;
  readonly readOnly: boolean;
}

export interface ComposeService {
  readonly name: string;
  readonly entrypoint: readonly string[];
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  readonly volumes: readonly VolumeMount[];
  /** Container ports compose publishes (on the host's loopback). */
  readonly publishedPorts: readonly number[];
  /** SIGTERM to SIGKILL on a stop (`stop_grace_period`, compose's default 10 s). */
  readonly stopGraceMs: number;
  /** Services this one waits for: `completed` ones must have exited 0 first. */
  readonly dependsOn: readonly { service: string; completed: boolean }[];
}

export interface ComposeFile {
  readonly services: readonly ComposeService[];
  readonly volumes: readonly string[];
}

type Raw = Record<string, any>;

/** Compose's default `stop_grace_period`. */
const STOP_GRACE_DEFAULT = '10s';

/** Compose durations as this file writes them: `5s`, `500ms`, `1m`. */
export function durationMs(text: string): number {
  const match = /^(\d+)(ms|s|m)$/.exec(text);
  if (match === null) throw new Error(`docker-compose.yml: unsupported duration '${text}'`);
  const unitMs = { ms: 1, s: 1_000, m: 60_000 }[match[2] as 'ms' | 's' | 'm'];
  return Number(match[1]) * unitMs;
}

/**
 * Compose's interpolation of a value: `$$` is a literal `$`. The file uses no variables, so any
 * other `$` is refused rather than passed on unexpanded.
 */
export function interpolate(text: string): string {
  return text.replace(/\$(\$|\{?[A-Za-z_]?)/g, (match, next: string) => {
    if (next === '$') return '$';
    throw new Error(`docker-compose.yml: variable ${match}... is not supported by the e2e suite`);
  });
}

function volumeMount(spec: string, declared: readonly string[]): VolumeMount {
  const [volume, target, mode] = spec.split(':');
  if (volume === undefined || target === undefined || !declared.includes(volume)) {
    throw new Error(`docker-compose.yml: '${spec}' is not a mount of a declared named volume`);
  }
  return { volume, target, readOnly: mode === 'ro' };
}

function publishedPort(spec: string): number {
  const parts = spec.split(':');
  if (parts.length !== 3 || parts[0] !== '127.0.0.1') {
    throw new Error(`docker-compose.yml: port '${spec}' is not published on loopback only`);
  }
  return Number(parts[2]);
}

function dependencies(raw: unknown): { service: string; completed: boolean }[] {
  if (raw === undefined) return [];
  if (Array.isArray(raw)) return raw.map((service: string) => ({ service, completed: false }));
  return Object.entries(raw as Raw).map(([service, how]) => ({
    service,
    completed: how?.condition === 'service_completed_successfully',
  }));
}

function service(name: string, raw: Raw, declared: readonly string[]): ComposeService {
  return {
    name,
    entrypoint: (raw['entrypoint'] as string[]).map(interpolate),
    command: (raw['command'] as string[]).map(interpolate),
    environment: Object.fromEntries(
      Object.entries((raw['environment'] ?? {}) as Raw).map(([k, v]) => [k, interpolate(String(v))]),
    ),
    volumes: ((raw['volumes'] ?? []) as string[]).map((v) => volumeMount(v, declared)),
    publishedPorts: ((raw['ports'] ?? []) as string[]).map(publishedPort),
    stopGraceMs: durationMs(raw['stop_grace_period'] ?? STOP_GRACE_DEFAULT),
    dependsOn: dependencies(raw['depends_on']),
  };
}

/** Services in an order where each comes after everything it depends on. */
function startOrder(services: readonly ComposeService[]): ComposeService[] {
  const ordered: ComposeService[] = [];
  const placed = new Set<string>();
  while (ordered.length < services.length) {
    const ready = services.filter(
      (s) => !placed.has(s.name) && s.dependsOn.every((d) => placed.has(d.service)),
    );
    if (ready.length === 0) throw new Error('docker-compose.yml: depends_on has a cycle');
    for (const s of ready) {
      ordered.push(s);
      placed.add(s.name);
    }
  }
  return ordered;
}

export function readComposeFile(path = `${REPO_ROOT}docker-compose.yml`): ComposeFile {
  const raw = parseYaml(readFileSync(path, 'utf8'), { merge: true }) as Raw;
  const volumes = Object.keys((raw['volumes'] ?? {}) as Raw);
  const services = Object.entries(raw['services'] as Raw).map(([name, s]) =>
    service(name, s as Raw, volumes),
  );
  return { services: startOrder(services), volumes };
}
