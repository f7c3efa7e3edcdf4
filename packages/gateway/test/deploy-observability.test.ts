// deploy/observability: every query of the Grafana dashboard and of the Prometheus alert rules
// names only metrics the project exports (the names its sources render), and each rule says how
// bad it is and what it is about.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DIR = join(ROOT, 'deploy/observability');
const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Metric names the sources render: quoted `mq_...` names (family names are string literals). */
function exportedMetrics(): Set<string> {
  const names = new Set<string>();
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    for (const file of sourceFiles(join(ROOT, 'packages', pkg, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/['"`](mq_[a-z0-9_]+)['"`{ ]/g)) {
        names.add(match[1]!);
      }
    }
  }
  return names;
}

function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b(mq_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}

function known(name: string, exported: Set<string>): boolean {
  if (exported.has(name)) return true;
  const suffix = HISTOGRAM_SUFFIXES.find((s) => name.endsWith(s));
  return suffix !== undefined && exported.has(name.slice(0, -suffix.length));
}

function balanced(expr: string): boolean {
  let depth = 0;
  for (const char of expr) {
    if (char === '(' || char === '{' || char === '[') depth += 1;
    if (char === ')' || char === '}' || char === ']') depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: { severity?: string };
  annotations?: { summary?: string };
}

describe('deploy/observability', () => {
  const exported = exportedMetrics();

  it('finds the exported families it checks against', () => {
    for (const name of ['mq_queue_messages', 'mq_queue_oldest_visible_age_seconds',
      'mq_gateway_request_duration_seconds', 'mq_member_storage_fsync_seconds']) {
      expect(exported.has(name), name).toBe(true);
    }
  });

  it('the dashboard queries only exported metrics', () => {
    const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
      templating: { list: { name: string; type: string; definition?: string }[] };
    };
    const queries = [
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => [p.title, t.expr] as const)),
      ...dashboard.templating.list
        .filter((v) => v.type === 'query')
        .map((v) => [v.name, v.definition!] as const),
    ];
    expect(queries.length).toBeGreaterThan(10);
    for (const [where, expr] of queries) {
      const names = metricsIn(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(known(name, exported), `${where}: ${name}`).toBe(true);
      expect(balanced(expr), `${where}: ${expr}`).toBe(true);
    }
  });

  it('the alert rules query only exported metrics and say severity and summary', () => {
    const file = parse(readFileSync(join(DIR, 'prometheus-alerts.yml'), 'utf8')) as {
      groups: { name: string; rules: Rule[] }[];
    };
    const rules = file.groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(5);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      const names = metricsIn(rule.expr);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) expect(known(name, exported), `${rule.alert}: ${name}`).toBe(true);
      expect(balanced(rule.expr), rule.alert).toBe(true);
      expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.for, rule.alert).toMatch(/^\d+[smh]$/);
    }
  });
});
