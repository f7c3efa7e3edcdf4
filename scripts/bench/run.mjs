#!/usr/bin/env node
// `npm run bench -- [name] [--flag value ...]`: runs one benchmark by name, or every available
// one in order when no name is given. Each benchmark is a module here exporting
// `run(options)`, where options = { flags: {name: string|true}, argv: string[] }.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = ['engine', 'raft', 'local', 'cluster', 'compare', 'backlog', 'rebuild'];

function parse(argv) {
  const names = [];
  const flags = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      names.push(arg);
      continue;
    }
    const [key, inline] = arg.slice(2).split('=', 2);
    if (inline !== undefined) flags[key] = inline;
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[key] = argv[++i];
    else flags[key] = true;
  }
  return { names, flags };
}

const moduleUrl = (name) => new URL(`./${name}.mjs`, import.meta.url);
const available = (name) => existsSync(fileURLToPath(moduleUrl(name)));

async function main() {
  const argv = process.argv.slice(2);
  const { names, flags } = parse(argv);
  for (const name of names) {
    if (!BENCHMARKS.includes(name)) {
      process.stderr.write(`unknown benchmark '${name}'; known: ${BENCHMARKS.join(', ')}\n`);
      process.exit(2);
    }
    if (!available(name)) {
      process.stderr.write(`benchmark '${name}' is not available yet (no scripts/bench/${name}.mjs)\n`);
      process.exit(2);
    }
  }
  const selected = names.length > 0 ? names : BENCHMARKS.filter(available);
  for (const name of selected) {
    process.stdout.write(`== bench ${name}\n`);
    const bench = await import(moduleUrl(name).href);
    await bench.run({ flags, argv });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`bench failed: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
