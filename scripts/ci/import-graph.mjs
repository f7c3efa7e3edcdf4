#!/usr/bin/env node
// `node scripts/ci/import-graph.mjs`: checks the import graph of packages/*/src.
// - Packages: every `@spoolmq/x` a package's sources import must be in its package.json
//   dependencies, and the packages import no circle (the README's "depend downwards only").
//   Lower packages may import only what MAY_IMPORT lists (protocol: the engine alone).
// - Files: no circle of static imports inside a package. Circles that already exist are listed
//   in KNOWN_FILE_CIRCLES (to be removed as they go); a new one fails, and so does a listed one
//   that is gone (so the list only shrinks).
// Type-only imports count: a circle of types is still a circle of knowledge.
// Exits 1 with the findings, 0 with a one-line summary.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGES_DIR = join(ROOT, 'packages');
const SCOPE = '@spoolmq/';

/** File circles present when this check was added, as sorted `a -> b` member lists. */
const KNOWN_FILE_CIRCLES = new Set([]);

/** The packages each may import at most (the layering of the README); others unconstrained. */
const MAY_IMPORT = {
  engine: [],
  raft: ['engine'],
  protocol: ['engine'],
  client: [],
  gateway: ['engine', 'protocol'],
  member: ['engine', 'raft', 'protocol'],
};

// import ... from 'x'; export ... from 'x'; import 'x'; import('x')
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function sourceFiles(dir) {
  const files = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

function specifiersOf(file) {
  // Comments that start a line only: a `//` or `/*` inside a string must not hide an import.
  const text = readFileSync(file, 'utf8').replace(/^\s*(\/\/[^\n]*|\/\*[\s\S]*?\*\/)/gm, '');
  return [...text.matchAll(SPECIFIER)].map((match) => match[1]);
}

/** Strongly connected components with more than one node (Tarjan), as sorted node lists. */
function circles(graph) {
  let index = 0;
  const stack = [];
  const state = new Map();
  const found = [];
  const visit = (node) => {
    const entry = { index, low: index, onStack: true };
    index++;
    state.set(node, entry);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === undefined) {
        visit(next);
        entry.low = Math.min(entry.low, state.get(next).low);
      } else if (seen.onStack) entry.low = Math.min(entry.low, seen.index);
    }
    if (entry.low !== entry.index) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      state.get(member).onStack = false;
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? new Set()).has(node)) {
      found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

function main() {
  const problems = [];
  const packageGraph = new Map();
  const fileGraph = new Map();
  let fileCount = 0;
  for (const name of readdirSync(PACKAGES_DIR).sort()) {
    const src = join(PACKAGES_DIR, name, 'src');
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(PACKAGES_DIR, name, 'package.json'), 'utf8'));
      statSync(src);
    } catch {
      continue;
    }
    const declared = new Set(Object.keys(manifest.dependencies ?? {}));
    const uses = new Set();
    packageGraph.set(name, uses);
    for (const file of sourceFiles(src)) {
      fileCount++;
      const from = relative(PACKAGES_DIR, file);
      const edges = new Set();
      fileGraph.set(from, edges);
      for (const spec of specifiersOf(file)) {
        if (spec.startsWith(SCOPE)) {
          const target = spec.slice(SCOPE.length).split('/')[0];
          if (target === name) problems.push(`${from} imports its own package as ${spec}`);
          uses.add(target);
          const allowed = MAY_IMPORT[name];
          if (allowed !== undefined && target !== name && !allowed.includes(target)) {
            problems.push(`${from} imports ${spec}: ${name} may import only ${allowed}`);
          }
          if (!declared.has(SCOPE + target)) {
            problems.push(`${from} imports ${spec}, not in ${name}/package.json dependencies`);
          }
        } else if (spec.startsWith('.')) {
          const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
          edges.add(relative(PACKAGES_DIR, target));
        }
      }
    }
  }
  for (const circle of circles(packageGraph)) {
    problems.push(`package circle: ${circle.join(' <-> ')}`);
  }
  const fileCircles = circles(fileGraph).map((circle) => circle.join(' | '));
  for (const circle of fileCircles) {
    if (!KNOWN_FILE_CIRCLES.has(circle)) problems.push(`file circle: ${circle}`);
  }
  for (const known of KNOWN_FILE_CIRCLES) {
    if (!fileCircles.includes(known)) {
      problems.push(`known file circle gone, remove it from KNOWN_FILE_CIRCLES: ${known}`);
    }
  }
  if (problems.length > 0) {
    process.stderr.write(`import graph: ${problems.length} problem(s)\n`);
    for (const problem of problems) process.stderr.write(`  ${problem}\n`);
    process.exit(1);
  }
  const layers = [...packageGraph].map(
    ([name, uses]) => `${name} -> ${[...uses].sort().join(', ') || '-'}`,
  );
  process.stdout.write(`import graph: ${fileCount} files, no new circle; ${layers.join('; ')}\n`);
}

main();
