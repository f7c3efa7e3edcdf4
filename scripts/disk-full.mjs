#!/usr/bin/env node
// `node scripts/disk-full.mjs` (after `npm run build`; root: it mounts a tmpfs): `mq serve` on a
// real, small filesystem that fills up (issue 14). Two phases, each on a fresh tmpfs:
//   watermark: reserve RESERVE_MIB. 64 KiB sends until they answer 507 storage_full; then a
//              consumer drains the queue to empty (every receive and ack must succeed); then a
//              ballast file written at the start is deleted, the alarm must clear, and sends
//              must resume, all in the same process.
//   enospc:    reserve 0 (no watermark): sends until LevelDB's writes fail with ENOSPC; every
//              answer must be 201, 500 operation_unconfirmed or 503 (the member recovers in
//              process, never exits); then the ballast is deleted, the member must recover and
//              serve again, and every message answered 201 must still be there.
//   fullstart: a member with a 32 MiB disk ballast (--disk-ballast) and 100 messages is closed,
//              the volume is filled to the last byte, and the member starts again: it must
//              come up (the ballast makes room), list, read stats, receive and ack, answer
//              sends 507 storage_full; once the filler goes, sends resume and the ballast is
//              written again, all in the same process, and no message is lost.
// Prints what it saw and exits 1 on a violation, 2 when it cannot mount (not root, no tmpfs).
// Bounded: at most SENDS_MAX sends a phase and PHASE_SECONDS_MAX seconds a wait.
// SKIP_WATERMARK=1 skips the watermark phase; ONLY_FULLSTART=1 runs the fullstart phase alone.
// About 2 minutes for all three.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync, writeSync, rmdirSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../packages/cli/dist/index.js';

const MiB = 1024 * 1024;
const VOLUME_MIB = 160;
const RESERVE_MIB = 48;
const BALLAST_MIB = 40;
/**
 * The enospc phase frees more than the data it wrote: LevelDB needs room to come back (its
 * compactions write their output before deleting their input; see README, Full disks).
 */
const ENOSPC_VOLUME_MIB = 256;
const ENOSPC_BALLAST_MIB = 160;
/** Random, so LevelDB's compression cannot shrink it. */
const payload = () => randomBytes(64 * 1024);
const SENDS_MAX = 10_000;
const PHASE_SECONDS_MAX = 60;

let violations = 0;
function check(ok, what) {
  if (!ok) violations++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

function freeMiB(dir) {
  const s = statfsSync(dir);
  return ((s.bavail * s.bsize) / MiB).toFixed(1);
}

function mountTmpfs(volumeMiB) {
  const dir = mkdtempSync(join(tmpdir(), 'mq-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${volumeMiB}m`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmdirSync(dir);
    console.error(`cannot mount a tmpfs (root needed): ${error.message}`);
    process.exit(2);
  }
  return dir;
}

function unmount(dir) {
  execFileSync('umount', [dir]);
  rmdirSync(dir);
}

async function start(dir, reserveBytes, ballastMiB, extra = {}) {
  const ballast = join(dir, 'ballast');
  writeFileSync(ballast, randomBytes(ballastMiB * MiB));
  const server = await serve(dir, reserveBytes, extra);
  await server.member.admin.createAccount('t', undefined);
  const key = (await server.member.admin.createKey('t')).key;
  return { server, ballast, key, ...client(server, key) };
}

function serve(dir, reserveBytes, extra = {}) {
  return startServe({
    dataDir: join(dir, 'data'),
    host: '127.0.0.1',
    port: 0,
    adminHost: '127.0.0.1',
    adminPort: 0,
    adminTokenFile: null,
    adminToken: 'a'.repeat(32),
    tls: null,
    adminTls: null,
    connectionsPerAddress: 64,
    diskReserveBytes: reserveBytes,
    ...extra,
  });
}

function client(server, key) {
  const headers = { authorization: `Bearer ${key}` };
  const v1 = server.baseUrl;
  const call = async (method, path, body, extra = {}) => {
    const response = await fetch(`${v1}${path}`, { method, headers: { ...headers, ...extra }, body });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: response.headers, bytes };
  };
  const kind = (answer) => {
    try {
      return JSON.parse(answer.bytes.toString()).kind;
    } catch {
      return undefined;
    }
  };
  return { call, kind };
}

async function until(what, condition) {
  const deadline = Date.now() + PHASE_SECONDS_MAX * 1000;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** Receives and acks until the queue answers 204; returns the count, or -1 on a failure. */
async function drain(call) {
  let count = 0;
  for (;;) {
    const got = await call('POST', '/spools/default/queues/jobs/recv?waitSeconds=0');
    if (got.status === 204) return count;
    if (got.status !== 200) {
      console.log(`  receive answered ${got.status} ${got.bytes.toString().slice(0, 200)}`);
      return -1;
    }
    const ack = await call('POST', '/spools/default/ack', undefined, { 'svc-lease': got.headers.get('svc-lease') });
    if (ack.status !== 204) {
      console.log(`  ack answered ${ack.status} ${ack.bytes.toString().slice(0, 200)}`);
      return -1;
    }
    count++;
  }
}

async function watermarkPhase() {
  console.log(`\nwatermark: tmpfs ${VOLUME_MIB} MiB, reserve ${RESERVE_MIB} MiB, ballast ${BALLAST_MIB} MiB`);
  const dir = mountTmpfs(VOLUME_MIB);
  const { server, ballast, call, kind } = await start(dir, RESERVE_MIB * MiB, BALLAST_MIB);
  try {
    check((await call('PUT', '/spools/default/queues/jobs')).status === 201, 'queue created');
    const statuses = new Map();
    let sent = 0;
    let refused = null;
    for (let i = 0; i < SENDS_MAX && refused === null; i++) {
      const answer = await call('POST', '/spools/default/queues/jobs/send', payload());
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 201) sent++;
      else refused = answer;
    }
    console.log(`  ${sent} sends answered 201 before the first refusal; ${freeMiB(dir)} MiB free then`);
    check(refused?.status === 507 && kind(refused) === 'storage_full', `first refusal is 507 storage_full (got ${refused?.status} ${kind(refused ?? { bytes: Buffer.alloc(0) })})`);
    check(refused?.headers.get('retry-after') === '5', 'with Retry-After: 5');
    const drained = await drain(call);
    check(drained === sent, `consumer drained ${drained} of ${sent} under the alarm`);
    console.log(`  ${freeMiB(dir)} MiB free after the drain; deleting the ballast`);
    rmSync(ballast);
    const cleared = await until('clear', async () => server.member.diskStatus()?.alarm === false);
    check(cleared, `alarm cleared by itself (${freeMiB(dir)} MiB free)`);
    const after = await call('POST', '/spools/default/queues/jobs/send', payload());
    check(after.status === 201, `a send after the alarm answers ${after.status}`);
    check(server.member.status().storageRecovery?.startedTotal === 0, 'no storage failure happened');
  } finally {
    await server.close();
    unmount(dir);
  }
}

async function enospcPhase() {
  console.log(`\nenospc: tmpfs ${ENOSPC_VOLUME_MIB} MiB, no reserve, ballast ${ENOSPC_BALLAST_MIB} MiB`);
  const dir = mountTmpfs(ENOSPC_VOLUME_MIB);
  const { server, ballast, call, kind } = await start(dir, 0, ENOSPC_BALLAST_MIB);
  try {
    check((await call('PUT', '/spools/default/queues/jobs')).status === 201, 'queue created');
    const answers = new Map();
    let acknowledged = 0;
    let failedSince = null;
    for (let i = 0; i < SENDS_MAX; i++) {
      const answer = await call('POST', '/spools/default/queues/jobs/send', payload());
      const label = `${answer.status} ${kind(answer) ?? ''}`.trim();
      answers.set(label, (answers.get(label) ?? 0) + 1);
      if (answer.status === 201) acknowledged++;
      else failedSince ??= i;
      // Enough of the failing state seen: 50 answers after the first failure.
      if (failedSince !== null && i - failedSince >= 50) break;
    }
    console.log(`  answers: ${JSON.stringify(Object.fromEntries(answers))}; ${freeMiB(dir)} MiB free`);
    const allowed = [...answers.keys()].every((l) => ['201', '500 operation_unconfirmed', '503 unavailable'].includes(l));
    check(allowed, 'every answer is 201, 500 operation_unconfirmed or 503');
    check(failedSince !== null, 'the disk filled up');
    const recovery = server.member.status().storageRecovery;
    console.log(`  recovery: ${JSON.stringify(recovery)}`);
    rmSync(ballast);
    console.log(`  ballast deleted: ${freeMiB(dir)} MiB free`);
    const startedMs = Date.now();
    const back = await until('recovered', async () => {
      if (!server.member.service.ready()) return false;
      const stats = await call('GET', '/spools/default/stats');
      return stats.status === 200;
    });
    check(back, `the member recovered in process and serves the spool (${Date.now() - startedMs} ms after the ballast went)`);
    const drained = await drain(call);
    check(drained >= acknowledged, `every acknowledged message is there (${drained} received, ${acknowledged} acknowledged)`);
    const after = await call('POST', '/spools/default/queues/jobs/send', payload());
    check(after.status === 201, `a send after recovery answers ${after.status}`);
  } finally {
    await server.close();
    unmount(dir);
  }
}

/** Writes a file until the volume answers ENOSPC, down to single bytes: 0 bytes free after. */
function fill(path) {
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (const size of [MiB, 4096, 1]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          bytes += writeSync(fd, chunk);
        } catch (error) {
          if (error.code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

const FULLSTART_VOLUME_MIB = 128;
const FULLSTART_BALLAST_MIB = 32;

async function fullStartPhase() {
  console.log(`\nfullstart: tmpfs ${FULLSTART_VOLUME_MIB} MiB, reserve 24 MiB, member ballast ${FULLSTART_BALLAST_MIB} MiB`);
  const dir = mountTmpfs(FULLSTART_VOLUME_MIB);
  const options = { diskBallastBytes: FULLSTART_BALLAST_MIB * MiB };
  const memberBallast = join(dir, 'data', 'disk-ballast');
  const ballastSize = () => { try { return statSync(memberBallast).size; } catch { return 0; } };
  let server = null;
  try {
    const first = await start(dir, 24 * MiB, 0, options);
    server = first.server;
    const written = await until('ballast', async () => ballastSize() === FULLSTART_BALLAST_MIB * MiB);
    check(written, `the member wrote its ${FULLSTART_BALLAST_MIB} MiB ballast`);
    check((await first.call('PUT', '/spools/default/queues/jobs')).status === 201, 'queue created');
    let sent = 0;
    for (let i = 0; i < 100; i++) {
      if ((await first.call('POST', '/spools/default/queues/jobs/send', payload())).status === 201) sent++;
    }
    check(sent === 100, `100 sends answered 201 (${sent})`);
    await server.close();
    server = null;
    const filler = join(dir, 'filler');
    const filled = fill(filler);
    console.log(`  member closed; filler of ${(filled / MiB).toFixed(1)} MiB written: ${freeMiB(dir)} MiB free`);
    check(statfsSync(dir).bavail === 0, 'the volume is full to the last byte');
    const startedMs = Date.now();
    server = await serve(dir, 24 * MiB, options);
    const { call, kind } = client(server, first.key);
    console.log(`  started again in ${Date.now() - startedMs} ms; ${freeMiB(dir)} MiB free`);
    check(ballastSize() === 0, 'the member deleted its ballast to start');
    const listed = await call('GET', '/spools/default/queues/jobs/messages?limit=1000');
    const items = listed.status === 200 ? JSON.parse(listed.bytes.toString()).items.length : -1;
    check(listed.status === 200 && items === 100, `listing answers ${listed.status} with ${items} messages`);
    check((await call('GET', '/spools/default/stats')).status === 200, 'stats answer 200');
    const refused = await call('POST', '/spools/default/queues/jobs/send', payload());
    check(refused.status === 507 && kind(refused) === 'storage_full', `a send answers ${refused.status} ${kind(refused)}`);
    let taken = 0;
    for (let i = 0; i < 10; i++) {
      const got = await call('POST', '/spools/default/queues/jobs/recv?waitSeconds=0');
      if (got.status !== 200) break;
      const ack = await call('POST', '/spools/default/ack', undefined, { 'svc-lease': got.headers.get('svc-lease') });
      if (ack.status === 204) taken++;
    }
    check(taken === 10, `10 receives and acks succeed on the full volume (${taken})`);
    rmSync(filler);
    const cleared = await until('clear', async () => server.member.diskStatus()?.alarm === false);
    check(cleared, `alarm cleared once the filler went (${freeMiB(dir)} MiB free)`);
    const after = await call('POST', '/spools/default/queues/jobs/send', payload());
    check(after.status === 201, `a send then answers ${after.status}`);
    const rewritten = await until('ballast', async () => ballastSize() === FULLSTART_BALLAST_MIB * MiB);
    check(rewritten, 'the ballast was written again');
    const drained = await drain(call);
    check(drained === 91, `every message is there: ${drained} of 91 drained`);
    check(server.member.status().storageRecovery?.startedTotal === 0, 'no storage failure happened');
  } finally {
    await server?.close();
    unmount(dir);
  }
}

if (process.env.ONLY_FULLSTART !== '1') {
  if (process.env.SKIP_WATERMARK !== '1') await watermarkPhase();
  await enospcPhase();
}
await fullStartPhase();
console.log(violations === 0 ? '\nno violations' : `\n${violations} violations`);
process.exit(violations === 0 ? 0 : 1);
