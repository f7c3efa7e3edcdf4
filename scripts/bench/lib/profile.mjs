// Reads a V8 .cpuprofile (from `node --cpu-prof`) and reports where the time went, so a
// benchmark that misses its target can say why.
import { readFileSync } from 'node:fs';

/**
 * Self time per function and per package, in percent of all samples.
 * @param {string} path a .cpuprofile file
 * @param {number} top how many functions to list (1-1000)
 * @returns {{samples: number, functions: Array<{name: string, where: string, selfPct: number}>, packages: Array<{name: string, selfPct: number}>}}
 */
export function summarizeCpuProfile(path, top = 25) {
  const profile = JSON.parse(readFileSync(path, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const functions = new Map();
  const packages = new Map();
  for (const [id, count] of counts) {
    const { callFrame } = byId.get(id);
    const where = `${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}`;
    const key = `${callFrame.functionName || '(anonymous)'} ${where}`;
    functions.set(key, (functions.get(key) ?? 0) + count);
    const pkg = packageOf(callFrame.url, callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + count);
  }
  const pct = (count) => Number(((100 * count) / total).toFixed(2));
  return {
    samples: total,
    functions: [...functions].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, count]) => {
      const space = key.lastIndexOf(' ');
      return { name: key.slice(0, space), where: key.slice(space + 1), selfPct: pct(count) };
    }),
    packages: [...packages].sort((a, b) => b[1] - a[1]).map(([name, count]) => ({ name, selfPct: pct(count) })),
  };
}

function shortUrl(url) {
  if (url === '') return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const pk = url.indexOf('/packages/');
  if (pk >= 0) return url.slice(pk + 1);
  return url.replace(/^file:\/\//, '');
}

function packageOf(url, functionName) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return url.split('/')[0];
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const pk = url.match(/\/packages\/([^/]+)\//);
  return pk === null ? url : `@spoolmq/${pk[1]}`;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\/scripts\//, 'scripts/'))) {
  const summary = summarizeCpuProfile(process.argv[2], Number(process.argv[3] ?? 25));
  process.stdout.write(`${summary.samples} samples\n\nby package (self %):\n`);
  for (const p of summary.packages.slice(0, 20)) process.stdout.write(`  ${String(p.selfPct).padStart(6)}  ${p.name}\n`);
  process.stdout.write('\nby function (self %):\n');
  for (const f of summary.functions) process.stdout.write(`  ${String(f.selfPct).padStart(6)}  ${f.name}  ${f.where}\n`);
}
