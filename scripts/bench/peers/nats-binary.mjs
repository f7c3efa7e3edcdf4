// Which nats-server binary the NATS targets run, and how it was had.
//
// `jetstream { sync_interval: always }` (fsync every write before the PubAck, the only NATS mode
// as durable as mq) came with nats-server 2.10; this machine's Debian release (bookworm) ships
// 2.9.10. When the nats-server on PATH is older than that, this fetches Debian's own newer
// package from the next release's suite (trixie: nats-server 2.10.x) with `apt-get download`,
// using a private apt configuration under .bench-cache/ (the system's sources, lists and
// installed packages are left alone; the archive URI and keyring are the system's own), and
// unpacks it there with `dpkg-deb -x`. The binary is accepted only if `--version` says 2.10 or
// later and `-t` accepts a configuration with `sync_interval: always`. One binary serves every
// NATS target (default sync and sync-always alike), so the two modes differ in nothing else.
// If no such binary can be had, the default-sync targets run Debian's installed nats-server and
// the sync-always ones are reported as skipped with the reason; nothing else runs under their name.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../lib/index.mjs';
import { ensureInstalled, removeDir, tempDir } from './support.mjs';

/** Where the fetched package is unpacked (git-ignored). */
export const NATS_CACHE_DIR = join(REPO_ROOT, '.bench-cache', 'nats-server');
/** The Debian suite whose nats-server has `sync_interval` (2.10.x). */
const NEWER_SUITE = 'trixie';
const MIN_VERSION = [2, 10];
/** How long one apt-get run may take (ms). */
const APT_TIMEOUT_MS = 300_000;

let resolved = null;

/**
 * The nats-server to run (memoized): {path, version, source, syncAlways: {supported, detail}}.
 * `source` says where the binary came from; `syncAlways.detail` why it cannot run sync-always.
 */
export function resolveNatsServer(log = (line) => process.stdout.write(`${line}\n`)) {
  if (resolved !== null) return resolved;
  const attempts = [];
  const onPath = which('nats-server');
  if (onPath !== null) {
    const found = check(onPath, 'nats-server on PATH');
    if (found.syncAlways.supported) return (resolved = found);
    attempts.push(`${onPath}: ${found.version || 'no version'}: ${found.syncAlways.detail}`);
  }
  const cached = cachedBinary();
  if (cached !== null) {
    const found = check(cached.path, cached.source);
    if (found.syncAlways.supported) return (resolved = found);
    attempts.push(`${cached.path}: ${found.syncAlways.detail}`);
  }
  try {
    const fetched = fetchNewerDebianPackage(log);
    const found = check(fetched.path, fetched.source);
    if (found.syncAlways.supported) {
      log(`using ${found.path} (${found.version}, ${found.source})`);
      return (resolved = found);
    }
    attempts.push(`${fetched.path}: ${found.syncAlways.detail}`);
  } catch (error) {
    attempts.push(`fetching Debian ${NEWER_SUITE}'s nats-server failed: ${String(error?.message ?? error).slice(0, 600)}`);
  }
  // No binary with sync_interval: the default-sync targets still run on Debian's installed one.
  const installed = ensureInstalled('nats-server', 'nats-server', log);
  const fallback = check(installed.path, 'Debian package nats-server (installed with apt-get)');
  resolved = {
    ...fallback,
    syncAlways: { supported: false, detail: `nats-server ${fallback.version} has no sync_interval (2.10+); ${attempts.join('; ')}` },
  };
  return resolved;
}

/** `PATH --version` as text, e.g. "v2.10.27" ('' if it does not run). */
export function natsVersionOf(path) {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  return (result.stdout ?? '').trim().replace(/^nats-server:\s*/, '');
}

/**
 * Whether nats-server `path` accepts `sync_interval: always` (asks it with -t, which only checks
 * the configuration). Returns {supported, detail}.
 */
export function natsSyncAlwaysSupport(path) {
  const dir = tempDir('nats-check');
  try {
    const conf = join(dir, 'check.conf');
    writeFileSync(conf, `listen: 127.0.0.1:-1\njetstream { store_dir: "${dir}/js", sync_interval: always }\n`);
    const result = spawnSync(path, ['-c', conf, '-t'], { encoding: 'utf8', timeout: 10_000 });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().replaceAll(conf, 'conf');
    return { supported: result.status === 0, detail: output || String(result.error ?? `exit ${result.status}`) };
  } finally {
    removeDir(dir);
  }
}

function check(path, source) {
  const version = natsVersionOf(path);
  const parts = (version.match(/^v?(\d+)\.(\d+)/) ?? []).slice(1).map(Number);
  const newEnough = parts.length === 2 && (parts[0] > MIN_VERSION[0] || (parts[0] === MIN_VERSION[0] && parts[1] >= MIN_VERSION[1]));
  if (!newEnough) return { path, version, source, syncAlways: { supported: false, detail: `version ${version || 'unknown'} < ${MIN_VERSION.join('.')}` } };
  const support = natsSyncAlwaysSupport(path);
  return { path, version, source, syncAlways: { supported: support.supported, detail: support.supported ? 'sync_interval: always accepted (-t)' : support.detail } };
}

/** The binary unpacked by an earlier run, with what it came from; null if none. */
function cachedBinary() {
  const path = join(NATS_CACHE_DIR, 'root', 'usr', 'sbin', 'nats-server');
  if (!existsSync(path)) return null;
  let source = 'Debian package (unpacked earlier)';
  try {
    source = JSON.parse(readFileSync(join(NATS_CACHE_DIR, 'source.json'), 'utf8')).source ?? source;
  } catch {
    // keep the generic description
  }
  return { path, source };
}

/**
 * Downloads Debian `NEWER_SUITE`'s nats-server .deb with a private apt configuration and unpacks
 * it under NATS_CACHE_DIR; returns {path, source}. Throws with apt's output on failure.
 */
function fetchNewerDebianPackage(log) {
  const archive = systemArchive();
  const work = join(NATS_CACHE_DIR, 'apt');
  rmSync(work, { recursive: true, force: true });
  for (const sub of ['lists/partial', 'cache/archives/partial', 'parts', 'deb']) mkdirSync(join(work, sub), { recursive: true });
  writeFileSync(join(work, 'sources.list'), `deb [signed-by=${archive.signedBy}] ${archive.uri} ${NEWER_SUITE} main\n`);
  const options = [
    '-o', `Dir::Etc::SourceList=${join(work, 'sources.list')}`,
    '-o', `Dir::Etc::SourceParts=${join(work, 'parts')}`,
    '-o', `Dir::State::Lists=${join(work, 'lists')}`,
    '-o', `Dir::Cache=${join(work, 'cache')}`,
    '-o', 'APT::Sandbox::User=root',
  ];
  const run = (command, args, cwd) => {
    const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (result.status !== 0) throw new Error(`${command} ${args.filter((a) => !a.startsWith('Dir::') && a !== '-o').join(' ')}: ${(result.stderr || result.stdout || String(result.error)).trim().slice(-600)}`);
    return result.stdout;
  };
  log(`no nats-server 2.10+ here (sync_interval came with 2.10): fetching Debian ${NEWER_SUITE}'s nats-server package with apt-get download into ${NATS_CACHE_DIR}`);
  run('apt-get', [...options, 'update'], work);
  const version = run('apt-cache', [...options, 'show', '--no-all-versions', 'nats-server'], work).match(/^Version:\s*(\S+)/m)?.[1] ?? 'unknown';
  run('apt-get', [...options, 'download', 'nats-server'], join(work, 'deb'));
  const deb = readdirSync(join(work, 'deb')).find((f) => f.endsWith('.deb'));
  if (deb === undefined) throw new Error('apt-get download left no .deb');
  const staging = join(NATS_CACHE_DIR, 'root.partial');
  rmSync(staging, { recursive: true, force: true });
  run('dpkg-deb', ['-x', join(work, 'deb', deb), staging], work);
  const root = join(NATS_CACHE_DIR, 'root');
  rmSync(root, { recursive: true, force: true });
  renameSync(staging, root);
  const source = `Debian ${NEWER_SUITE} package nats-server ${version} (apt-get download, unpacked to .bench-cache/nats-server)`;
  writeFileSync(join(NATS_CACHE_DIR, 'source.json'), `${JSON.stringify({ source, deb, suite: NEWER_SUITE, version, fetchedAt: new Date().toISOString() }, null, 2)}\n`);
  // The lists (~10 MB) and the .deb are not needed once the binary is unpacked.
  rmSync(work, { recursive: true, force: true });
  return { path: join(root, 'usr', 'sbin', 'nats-server'), source };
}

/** The system's main Debian archive (URI and keyring) from its apt sources. */
function systemArchive() {
  const codename = (readText('/etc/os-release').match(/^VERSION_CODENAME=(\S+)/m)?.[1] ?? '').replace(/"/g, '');
  const entries = [];
  const dir = '/etc/apt/sources.list.d';
  const files = existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
  for (const file of files.filter((f) => f.endsWith('.sources'))) {
    for (const stanza of readText(file).split(/\n\s*\n/)) {
      const field = (name) => stanza.match(new RegExp(`^${name}:\\s*(.+)$`, 'mi'))?.[1].trim().split(/\s+/) ?? [];
      for (const uri of field('URIs')) entries.push({ uri, suites: field('Suites'), signedBy: field('Signed-By')[0] });
    }
  }
  for (const file of ['/etc/apt/sources.list', ...files.filter((f) => f.endsWith('.list'))]) {
    for (const line of readText(file).split('\n')) {
      const m = line.match(/^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)/);
      if (m === null) continue;
      entries.push({ uri: m[2], suites: [m[3]], signedBy: m[1]?.match(/signed-by=(\S+)/)?.[1] });
    }
  }
  const main = entries.find((e) => e.suites.includes(codename)) ?? entries.find((e) => !e.suites.some((s) => s.endsWith('-security')));
  if (main === undefined) throw new Error('no Debian archive found in the apt sources');
  return { uri: main.uri, signedBy: main.signedBy ?? '/usr/share/keyrings/debian-archive-keyring.gpg' };
}

function readText(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function which(binary) {
  const result = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}
