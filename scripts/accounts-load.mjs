#!/usr/bin/env node
// `npm run load:accounts`: a bounded load test of the account limits on loopback. Three members
// and two gateways (`--gateways 2`, so each enforces half of an account's rate), one account on a
// plan with a request rate, a message size limit and a stored-message cap. Phases:
//   rate:  CLIENTS concurrent clients, half on each gateway, send as fast as they can for
//          RATE_SECONDS; some sends declare an oversized body (413 from Content-Length).
//   full:  a second account whose spool holds at most FULL_CAP messages; CLIENTS clients send
//          until every answer is 507.
// Checks, exiting 1 on a violation: admitted requests <= rate x seconds + burst (+1 per gateway
// for bucket rounding); every 429 has a whole-second Retry-After >= 1; every oversized send is
// 413; the spools hold exactly the messages answered 201 (addedTotal and total): nothing was
// appended for a refused request; the capped spool holds exactly FULL_CAP.
// Flags: --rate N (100) --seconds S (5) --clients N (32).
import { parseArgs } from 'node:util';
import http from 'node:http';
import { ProcessCluster, ensureCliBuilt } from '../packages/testkit/dist/index.js';

const { values } = parseArgs({
  options: { rate: { type: 'string' }, seconds: { type: 'string' }, clients: { type: 'string' } },
  strict: true,
});
const RATE = Number(values.rate ?? 100);
const RATE_SECONDS = Number(values.seconds ?? 5);
const CLIENTS = Number(values.clients ?? 32);
const BURST = RATE;
const MESSAGE_LIMIT = 1024;
const FULL_CAP = 500;
/** Upper bound of the whole run's requests (a bound, so a broken limit cannot run away). */
const REQUESTS_MAX = 200_000;
for (const [name, value, max] of [['rate', RATE, 100_000], ['seconds', RATE_SECONDS, 60], ['clients', CLIENTS, 256]]) {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw new Error(`--${name} must be 1..${max}`);
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
let requests = 0;

function request(baseUrl, key, method, path, body, declaredLength) {
  requests++;
  if (requests > REQUESTS_MAX) throw new Error(`more than ${REQUESTS_MAX} requests: stopping`);
  const url = new URL(`${baseUrl}${path}`);
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${key}`, 'content-length': String(declaredLength ?? body?.length ?? 0) };
    // An oversized send goes on a connection of its own: the server answers 413 from the
    // Content-Length without reading the body, then closes that connection.
    const via = declaredLength === undefined ? agent : false;
    const req = http.request({ agent: via, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A request that waits out 429s (for setup and checks, not counted in the phases). */
async function patiently(...args) {
  for (;;) {
    const answer = await request(...args);
    if (answer.status !== 429) return answer;
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(answer.headers['retry-after'])));
  }
}

const violations = [];
function check(condition, message) {
  if (!condition) violations.push(message);
}

async function ratePhase(cluster, key) {
  const gateways = cluster.gateways.map((g) => g.baseUrl);
  await patiently(gateways[0], key, 'PUT', '/spools/default/queues/load');
  const counts = { 201: 0, 429: 0, 413: 0, other: 0 };
  const refused413 = { expected: 0 };
  const payload = Buffer.alloc(512, 7);
  // Let the buckets refill after setup, so the phase starts with one full burst per gateway.
  await new Promise((resolve) => setTimeout(resolve, (1000 * BURST) / RATE + 100));
  const startedMs = performance.now();
  const endMs = startedMs + RATE_SECONDS * 1000;
  const client = async (i) => {
    const base = gateways[i % gateways.length];
    for (let n = 0; performance.now() < endMs; n++) {
      const oversized = n % 10 === 9;
      if (oversized) refused413.expected++;
      const answer = oversized
        ? await request(base, key, 'POST', '/spools/default/queues/load/send', Buffer.alloc(MESSAGE_LIMIT + 1), MESSAGE_LIMIT + 1)
        : await request(base, key, 'POST', '/spools/default/queues/load/send', payload);
      if (answer.status === 429) {
        check(/^[1-9][0-9]*$/.test(answer.headers['retry-after'] ?? ''), `429 with Retry-After ${answer.headers['retry-after']}`);
        counts[429]++;
      } else if (answer.status === 201 || answer.status === 413) counts[answer.status]++;
      else counts.other++;
      if (oversized && answer.status !== 413 && answer.status !== 429) check(false, `oversized send answered ${answer.status}`);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  const seconds = (performance.now() - startedMs) / 1000;
  const admitted = counts[201] + counts[413]; // a 413 spent a token too (refused after the key check)
  const bound = RATE * seconds + BURST + gateways.length;
  check(admitted <= bound, `admitted ${admitted} > bound ${bound.toFixed(0)}`);
  check(counts.other === 0, `${counts.other} unexpected answers`);
  const stats = JSON.parse((await patiently(gateways[1], key, 'GET', '/spools/default/stats?queue=load')).body);
  const queueStats = stats.queues.items[0].stats;
  check(queueStats.addedTotal === counts[201], `addedTotal ${queueStats.addedTotal} != 201s ${counts[201]}`);
  check(queueStats.total === counts[201], `total ${queueStats.total} != 201s ${counts[201]}`);
  return { seconds, counts, admitted, bound, admittedPerSecond: admitted / seconds, stored: queueStats.total };
}

async function fullPhase(cluster, key) {
  const base = cluster.gateways[0].baseUrl;
  await patiently(base, key, 'PUT', '/spools/default/queues/full');
  const counts = { 201: 0, 507: 0, other: 0 };
  let done = false;
  const client = async () => {
    while (!done) {
      const answer = await request(base, key, 'POST', '/spools/default/queues/full/send', Buffer.alloc(64));
      if (answer.status === 201) counts[201]++;
      else if (answer.status === 507) {
        counts[507]++;
        if (counts[507] >= CLIENTS * 4) done = true;
      } else counts.other++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const stats = JSON.parse((await patiently(base, key, 'GET', '/spools/default/stats')).body).stats;
  check(counts[201] === FULL_CAP, `201s ${counts[201]} != cap ${FULL_CAP}`);
  check(stats.total === FULL_CAP && stats.addedTotal === FULL_CAP, `stored ${stats.total}/${stats.addedTotal} != cap ${FULL_CAP}`);
  check(counts.other === 0, `${counts.other} unexpected answers`);
  return { counts, stored: stats.total };
}

async function main() {
  await ensureCliBuilt();
  const cluster = await ProcessCluster.start({ members: 3, gateways: 2 });
  try {
    await cluster.waitReady();
    const admin = cluster.admin(0);
    await admin.putPlan('load', { requestsPerSecond: RATE, requestBurst: BURST, messageSizeMaxBytes: MESSAGE_LIMIT });
    await admin.putPlan('tiny', { messagesPerSpoolMax: FULL_CAP });
    await admin.createAccount('loaded', 'load');
    await admin.createAccount('filled', 'tiny');
    const rate = await ratePhase(cluster, (await admin.createKey('loaded')).key);
    const full = await fullPhase(cluster, (await admin.createKey('filled')).key);
    const lines = [
      `accounts load test: 3 members, 2 gateways (--gateways 2), ${CLIENTS} clients, loopback`,
      `rate phase: plan ${RATE} req/s burst ${BURST}, ${rate.seconds.toFixed(2)} s: 201 ${rate.counts[201]}, 413 ${rate.counts[413]}, 429 ${rate.counts[429]}; ` +
        `admitted ${rate.admitted} (${rate.admittedPerSecond.toFixed(1)}/s) <= bound ${rate.bound.toFixed(0)}; stored ${rate.stored} = 201s`,
      `full phase: cap ${FULL_CAP} messages: 201 ${full.counts[201]}, 507 ${full.counts[507]}; stored ${full.stored}`,
      violations.length === 0 ? 'all checks held' : `VIOLATIONS:\n  ${violations.join('\n  ')}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    agent.destroy();
    await cluster.stop();
  }
  process.exitCode = violations.length === 0 ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exitCode = 1;
});
