// A chaos scenario end to end: real `mq member` processes whose every link to each other runs
// through a fault-injecting proxy (ProxyMesh), a real `mq gateway` (its links to the members
// proxied too), the seeded workload through the gateway while the seeded schedule's episodes
// are injected; then heal, wait for the cluster, drain, check that every member rebuilt every
// group (a wiped member included), collect the final state and check the history.
//
// Every episode is flagged in the history as a window in which the primary may change: from the
// moment it is injected to `quietMs` after it was recovered (the schedule's quiet gap). An
// episode starts at its scheduled offset, or `quietMs` after the previous recovery if that ended
// late (a slow restart), so at most one episode is ever in effect.
//
// With a backlog (`backlogMiB`), the harness's account gets a plan big enough for it, and the
// backlog queue of the workload's spool is filled before the faults (backlog.ts); every
// recovery deadline (rebuild, readiness, convergence) grows with the backlog, bounded, since a
// wiped member's rebuild moves it; the drain and the final collection read the backlog queue
// too, so the checker accounts for every backlog message.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ACCOUNT } from '../cluster/admin-client.js';
import { ProcessCluster } from '../cluster/process-cluster.js';
import { metricSamples } from '../cluster/metrics-text.js';
import {
  BACKLOG_QUEUE,
  backlogPlanLimits,
  fillBacklog,
  type BacklogSummary,
} from './backlog.js';
import { backlogReadBack } from './backlog-payload.js';
import { check } from './checker.js';
import type { FinalState } from './final-state.js';
import { FaultInjector, REBUILD_TIMEOUT_MS, type FaultCounts } from './fault-injector.js';
import { writeHistoryFile } from './history-file.js';
import { History } from './history.js';
import { collectFinalState, drainQueues, type DrainSummary } from './drain.js';
import { ProxyMesh } from './proxy-mesh.js';
import { unrepairedPayloads, withLogViolations } from './log-checks.js';
import type { CheckReport } from './report.js';
import { FAULT_KINDS, makeSchedule, type FaultKind, type Schedule } from './schedule.js';
import {
  runWorkload,
  setupQueues,
  type WorkloadSummary,
  type WorkloadTarget,
} from './workload-executor.js';
import { defaultWorkloadModel, type WorkloadModel } from './workload.js';

export interface ScenarioOptions {
  /** Seeds the schedule and the workload; any 32-bit integer. */
  readonly seed: number;
  /** Length of the fault phase (the workload runs as long), ms. */
  readonly durationMs: number;
  /** Members, 3-9; default 3. */
  readonly members?: number;
  /** Fault kinds; default every kind of FAULT_KINDS. */
  readonly kinds?: readonly FaultKind[];
  /** Replaces fields of the default workload model. */
  readonly workload?: Partial<WorkloadModel>;
  /** Where the cluster's data and logs go; default a new temp directory. */
  readonly rootDir?: string;
  /** Keep data and logs even when the run is valid; default false (kept on a violation). */
  readonly keepFiles?: boolean;
  /** Progress lines (episodes, phases); default none. */
  readonly log?: (line: string) => void;
  /** Backlog filled before the faults, MiB, 0-BACKLOG_MIB_MAX; default 0 (none). */
  readonly backlogMiB?: number;
  /** Size of each backlog message, KiB, 1-1,024; default 64. */
  readonly backlogPayloadKiB?: number;
}

export interface ScenarioResult {
  readonly seed: number;
  readonly durationMs: number;
  readonly schedule: Schedule;
  readonly faults: FaultCounts;
  readonly workload: WorkloadSummary;
  readonly drain: DrainSummary;
  readonly report: CheckReport;
  /** The history as JSONL on disk, written when the run is invalid. */
  readonly historyPath: string | null;
  /** Where data and logs were (kept when invalid or `keepFiles`). */
  readonly rootDir: string;
  /** Wall time of the whole run, ms. */
  readonly wallMs: number;
  /** From the workload's start to the last recovery, ms (the schedule's, plus slow restarts). */
  readonly faultPhaseMs: number;
  /** The backlog asked for, MiB (0: none), and its message size, KiB. */
  readonly backlogMiB: number;
  readonly backlogPayloadKiB: number;
  /** What the fill stored; null without a backlog. */
  readonly backlog: BacklogSummary | null;
  /** How long each episode's recovery took (a wipe's: until rebuilt), in schedule order. */
  readonly recoveries: readonly Recovery[];
}

export interface Recovery {
  readonly label: string;
  readonly ms: number;
}

/** Largest backlog a scenario fills, MiB. */
export const BACKLOG_MIB_MAX = 64 * 1024;
export const BACKLOG_PAYLOAD_KIB_DEFAULT = 64;
/** Receivers per queue of the final drain when there is a backlog to read back. */
const BACKLOG_DRAIN_RECEIVERS = 4;
/** Backlog sends in flight during the fill. */
const BACKLOG_CONCURRENCY = 16;
/** The fill's bound: this much at least, plus FILL_MS_PER_MIB a MiB (at least 1 MiB/s). */
const FILL_MS_MIN = 60_000;
const FILL_MS_PER_MIB = 1_000;
/**
 * Recovery deadlines grow by this per MiB of backlog, up to RECOVERY_MS_MAX: a rebuild of at
 * least 1 MiB/s. Measured on the loaded 2-core machine (seed 20261203, 2 GiB): a wiped member
 * fetched its payloads at 2-4 MiB/s (one 512 KiB call in flight), so 4 MiB/s was too tight.
 */
const RECOVERY_MS_PER_BACKLOG_MIB = 1_000;
const RECOVERY_MS_MAX = 45 * 60_000;
/** The plan the harness's account gets when a backlog needs more than the default one. */
const BACKLOG_PLAN = 'chaos-backlog';

/**
 * The members' largest election timeout: the raft defaults (10 ticks of 50 ms), randomized up to
 * twice that. The CLI starts members with those defaults.
 */
export const MEMBER_ELECTION_TIMEOUT_MS = 1_000;
/** How long the cluster has to be ready again after the last episode. */
const SETTLE_TIMEOUT_MS = 60_000;
/** Log lines kept as examples of a log violation. */
const LOG_EXAMPLES_MAX = 5;
/** How long the drain may wait for leases and delays to run out. */
const DRAIN_BOUND_MS = 60_000;
/** How long every member has to reach the same applied index in every group. */
const CONVERGE_TIMEOUT_MS = 60_000;
/** Attempts (one per CONVERGE_POLL_MS) at setting up queues and collecting the final state. */
const ATTEMPTS_MAX = 40;
const RETRY_PAUSE_MS = 500;
const CONVERGE_POLL_MS = 250;
/** Added to the workload's bound beyond twice the schedule (see `workloadBoundMs`). */
const WORKLOAD_MARGIN_MS = 120_000;

/**
 * Runs one scenario (see the file comment) and checks it. Resolves with the report whatever the
 * verdict; rejects when the harness cannot do its part (a process that does not start, a
 * cluster that never becomes ready again, members that never converge), with log tails.
 */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const startedMs = performance.now();
  const backlog = backlogSize(options);
  const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'mq-chaos-')));
  await mkdir(rootDir, { recursive: true });
  const cluster = await ProcessCluster.create({
    members: options.members ?? 3,
    rootDir,
    keepFiles: true,
  });
  const schedule = makeSchedule({
    seed: options.seed,
    members: cluster.ids,
    durationMs: options.durationMs,
    electionTimeoutMs: MEMBER_ELECTION_TIMEOUT_MS,
    ...(options.kinds === undefined ? {} : { kinds: options.kinds }),
  });
  const mesh = await ProxyMesh.start(cluster.memberAddresses(), { clients: ['gateway'] });
  let removeRoot = false;
  try {
    const run = await exercise(options, backlog, cluster, mesh, schedule);
    const historyPath = run.report.valid ? null : await keepEvidence(rootDir, options.seed, run);
    removeRoot = run.report.valid && options.keepFiles !== true && options.rootDir === undefined;
    const { faults, workload, drain, report, faultPhaseMs, recoveries } = run;
    const wallMs = performance.now() - startedMs;
    const { seed } = options;
    const { durationMs } = schedule;
    const counts = { faults, workload, drain, report, faultPhaseMs, recoveries };
    const sizes = { backlogMiB: backlog.mib, backlogPayloadKiB: backlog.payloadKiB };
    const filled = { ...sizes, backlog: run.backlog };
    return { seed, durationMs, schedule, ...counts, ...filled, historyPath, rootDir, wallMs };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const tails = cluster.logTails(30);
    throw new Error(`chaos seed ${options.seed}: ${reason}\n${tails}`, { cause: error });
  } finally {
    await cluster.stop();
    await mesh.close();
    if (removeRoot) await rm(rootDir, { recursive: true, force: true });
  }
}

interface BacklogSize {
  readonly mib: number;
  readonly payloadKiB: number;
}

/** The backlog a scenario asks for (0 MiB: none). Throws RangeError out of range. */
function backlogSize(options: ScenarioOptions): BacklogSize {
  const mib = options.backlogMiB ?? 0;
  const payloadKiB = options.backlogPayloadKiB ?? BACKLOG_PAYLOAD_KIB_DEFAULT;
  if (!(Number.isInteger(mib) && mib >= 0 && mib <= BACKLOG_MIB_MAX)) {
    throw new RangeError(`backlogMiB must be an integer in 0-${BACKLOG_MIB_MAX}, got ${mib}`);
  }
  if (!(Number.isInteger(payloadKiB) && payloadKiB >= 1 && payloadKiB <= 1024)) {
    throw new RangeError(`backlogPayloadKiB must be an integer in 1-1024, got ${payloadKiB}`);
  }
  return { mib, payloadKiB };
}

/**
 * A recovery deadline for a cluster holding `backlog`: `baseMs` plus
 * RECOVERY_MS_PER_BACKLOG_MIB a MiB, at most RECOVERY_MS_MAX (and never less than `baseMs`).
 */
export function recoveryDeadlineMs(baseMs: number, backlogMiB: number): number {
  const grownMs = baseMs + backlogMiB * RECOVERY_MS_PER_BACKLOG_MIB;
  return Math.max(baseMs, Math.min(RECOVERY_MS_MAX, grownMs));
}

interface Exercised {
  readonly history: History;
  readonly final: FinalState;
  readonly faults: FaultCounts;
  readonly workload: WorkloadSummary;
  readonly drain: DrainSummary;
  readonly report: CheckReport;
  readonly faultPhaseMs: number;
  readonly backlog: BacklogSummary | null;
  readonly recoveries: readonly Recovery[];
}

/** Start, fill the backlog, workload under faults, heal, drain, converge, collect, check. */
async function exercise(
  options: ScenarioOptions,
  backlog: BacklogSize,
  cluster: ProcessCluster,
  mesh: ProxyMesh,
  schedule: Schedule,
): Promise<Exercised> {
  const log = options.log ?? ((): void => undefined);
  const model = defaultWorkloadModel(options.seed, options.workload);
  const deadlineMs = (baseMs: number): number => recoveryDeadlineMs(baseMs, backlog.mib);
  cluster.setPeersFor((id) => mesh.peersFor(id));
  cluster.setGatewayMembers(() => mesh.peersFor('gateway'));
  const episodes = schedule.episodes.length;
  log(`chaos: seed ${options.seed}, ${episodes} episodes, data in ${cluster.rootDir}`);
  await cluster.start();
  await cluster.waitReady(SETTLE_TIMEOUT_MS);
  const { target, history, filled } = await prepare(options, backlog, cluster, model, log);
  const rebuildMs = deadlineMs(REBUILD_TIMEOUT_MS);
  const injector = new FaultInjector(cluster, mesh, model.spool, rebuildMs);
  const faultStartMs = performance.now();
  const recoveries: Recovery[] = [];
  const durationMs = workloadBoundMs(schedule, rebuildMs);
  const workload = await underFaults(
    (signal) => runWorkload({ model, target, history, durationMs, signal }),
    () => runEpisodes(schedule, injector, history, log, recoveries),
  );
  const faultPhaseMs = performance.now() - faultStartMs;
  log(`chaos: faults done; ${workload.operations} workload operations; settling`);
  mesh.heal();
  await cluster.waitReady(deadlineMs(SETTLE_TIMEOUT_MS));
  log('chaos: healed and ready; draining');
  // The drain and the collection read the backlog queue too.
  const all = filled === null ? model : { ...model, queues: [...model.queues, BACKLOG_QUEUE] };
  const receivers = filled === null ? 1 : BACKLOG_DRAIN_RECEIVERS;
  const drained = { model: all, target, history, boundMs: DRAIN_BOUND_MS, receivers };
  const drain = await drainQueues(drained);
  log(`chaos: drained ${drain.acked} (${drain.drained ? 'empty' : 'not empty'}); converging`);
  await waitConverged(cluster, deadlineMs(CONVERGE_TIMEOUT_MS));
  log('chaos: converged; reading the final state');
  const final = await retried(() => collectFinalState({ model: all, target, history }));
  const logViolations = await unrepairedPayloads(join(cluster.rootDir, 'logs'));
  const report = withLogViolations(check(history, final), logViolations, LOG_EXAMPLES_MAX);
  const faults = injector.counts;
  const counts = { faults, workload, drain, report, faultPhaseMs, recoveries };
  const operations = history.operations();
  const checked = filled === null ? null : { ...filled, readBack: backlogReadBack(operations) };
  return { history, final, ...counts, backlog: checked };
}

interface Prepared {
  readonly target: WorkloadTarget;
  readonly history: History;
  readonly filled: BacklogSummary | null;
}

/**
 * The harness's account (with a plan for the backlog), its key, the queues, and the backlog
 * filled. The history starts here: the backlog's sends are in it.
 */
async function prepare(
  options: ScenarioOptions,
  backlog: BacklogSize,
  cluster: ProcessCluster,
  model: WorkloadModel,
  log: (line: string) => void,
): Promise<Prepared> {
  const totalBytes = backlog.mib * 2 ** 20;
  if (totalBytes > 0) await retried(() => provisionBacklogPlan(cluster, totalBytes));
  // The harness's test account (its spools are the ones primaryOf and the workload name).
  const apiKey = await retried(() => cluster.apiKey());
  const target: WorkloadTarget = { baseUrl: cluster.baseUrl, apiKey };
  const queues = totalBytes > 0 ? [...model.queues, BACKLOG_QUEUE] : model.queues;
  await retried(() => setupQueues({ ...model, queues }, target));
  const history = new History();
  if (totalBytes === 0) return { target, history, filled: null };
  log(`chaos: filling ${backlog.mib} MiB of ${backlog.payloadKiB} KiB messages`);
  const filled = await fillBacklog({
    seed: options.seed,
    target,
    spool: model.spool,
    history,
    totalBytes,
    payloadBytes: backlog.payloadKiB * 1024,
    concurrency: BACKLOG_CONCURRENCY,
    boundMs: FILL_MS_MIN + backlog.mib * FILL_MS_PER_MIB,
    requestTimeoutMs: model.requestTimeoutMs,
    log,
  });
  if (!filled.complete) log('chaos: the backlog fill ran out of time; going on with what it has');
  return { target, history, filled };
}

/**
 * A plan with room for the backlog (`backlogPlanLimits`), and the harness's account on it
 * (created with it, or moved to it if it exists), through the first live member's admin API.
 */
async function provisionBacklogPlan(cluster: ProcessCluster, backlogBytes: number): Promise<void> {
  const live = cluster.members.findIndex((member) => member.alive && !member.paused);
  const admin = cluster.admin(Math.max(0, live));
  await admin.putPlan(BACKLOG_PLAN, backlogPlanLimits(backlogBytes));
  const account = { id: TEST_ACCOUNT, plan: BACKLOG_PLAN };
  const created = await admin.request('POST', '/accounts', account);
  if (created.status === 409) await admin.setAccountPlan(TEST_ACCOUNT, BACKLOG_PLAN);
  else if (created.status !== 201) throw new Error(`create the test account: ${created.status}`);
}

/**
 * Runs the workload until the last episode has been recovered from: episodes start late when a
 * restart was slow, and the workload keeps going through every one of them. Rejects with the
 * episodes' error after the workload stopped.
 */
async function underFaults<T>(
  workload: (signal: AbortSignal) => Promise<T>,
  episodes: () => Promise<void>,
): Promise<T> {
  const stop = new AbortController();
  const running = workload(stop.signal);
  let failure: { readonly error: unknown } | null = null;
  try {
    await episodes();
  } catch (error) {
    failure = { error };
  } finally {
    stop.abort();
  }
  const result = await running;
  if (failure !== null) throw failure.error;
  return result;
}

/**
 * The workload's own bound: the schedule, doubled for late episodes, plus a margin, plus the
 * longest each rebuilding episode (wipe, corrupt) may take.
 */
function workloadBoundMs(schedule: Schedule, rebuildMs: number): number {
  const rebuilds = schedule.episodes.filter((e) => e.kind === 'wipe' || e.kind === 'corrupt');
  return 2 * schedule.durationMs + WORKLOAD_MARGIN_MS + rebuilds.length * rebuildMs;
}

/** Writes the history (JSONL) and the final state next to the logs; returns the history path. */
async function keepEvidence(rootDir: string, seed: number, run: Exercised): Promise<string> {
  const historyPath = join(rootDir, `history-seed-${seed}.jsonl`);
  await writeHistoryFile(historyPath, run.history);
  const finalPath = join(rootDir, `final-seed-${seed}.json`);
  await writeFile(finalPath, `${JSON.stringify(run.final, null, 1)}\n`, 'utf8');
  return historyPath;
}

/**
 * Injects every episode at its time (see the file comment) and flags its window; appends how
 * long each recovery took to `recoveries`.
 */
async function runEpisodes(
  schedule: Schedule,
  injector: FaultInjector,
  history: History,
  log: (line: string) => void,
  recoveries: Recovery[],
): Promise<void> {
  const quietMs = 2 * MEMBER_ELECTION_TIMEOUT_MS;
  const originMs = performance.now();
  let earliestMs = originMs;
  for (const episode of schedule.episodes) {
    await sleepUntil(Math.max(originMs + episode.startMs, earliestMs));
    const injectedAtMs = history.now();
    const fault = await injector.inject(episode);
    log(`chaos: +${elapsedS(originMs)} s ${fault.label}`);
    await sleepUntil(performance.now() + (episode.endMs - episode.startMs));
    const recoveringMs = performance.now();
    try {
      await fault.recover();
    } finally {
      history.markWindow(fault.label, injectedAtMs, history.now() + quietMs);
    }
    const ms = performance.now() - recoveringMs;
    recoveries.push({ label: fault.label, ms });
    const took = `(recovery ${(ms / 1000).toFixed(1)} s)`;
    log(`chaos: +${elapsedS(originMs)} s recovered from ${fault.label} ${took}`);
    earliestMs = performance.now() + quietMs;
  }
}

/**
 * Resolves once every member hosts the same Raft groups at the same applied index: the wiped
 * member was rebuilt, the others caught up. Rejects after `timeoutMs` with what differs.
 */
async function waitConverged(cluster: ProcessCluster, timeoutMs: number): Promise<void> {
  const deadlineMs = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadlineMs) {
    const applied = await Promise.all(cluster.members.map(async (member) => {
      const text = await member.metrics().catch(() => '');
      const samples = metricSamples(text, 'mq_member_raft_applied_index');
      return Object.fromEntries(samples.map((s) => [s.labels['group'] ?? '', s.value]));
    }));
    last = JSON.stringify(Object.fromEntries(cluster.ids.map((id, i) => [id, applied[i]])));
    if (sameGroupsAndIndexes(applied)) return;
    await sleepUntil(performance.now() + CONVERGE_POLL_MS);
  }
  throw new Error(`members did not converge within ${timeoutMs} ms: ${last}`);
}

function sameGroupsAndIndexes(applied: readonly Record<string, number>[]): boolean {
  const first = applied[0];
  if (first === undefined || Object.keys(first).length === 0) return false;
  return applied.every((groups) => {
    const keys = Object.keys(groups);
    return keys.length === Object.keys(first).length && keys.every((k) => groups[k] === first[k]);
  });
}

/** `attempt` until it resolves, at most ATTEMPTS_MAX times; rejects with the last error. */
async function retried<T>(attempt: () => Promise<T>): Promise<T> {
  let lastError: unknown;
  for (let i = 0; i < ATTEMPTS_MAX; i += 1) {
    try {
      return await attempt();
    } catch (error) {
      lastError = error;
      await sleepUntil(performance.now() + RETRY_PAUSE_MS);
    }
  }
  throw lastError;
}

function sleepUntil(atMs: number): Promise<void> {
  const waitMs = atMs - performance.now();
  return waitMs <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, waitMs));
}

function elapsedS(originMs: number): string {
  return ((performance.now() - originMs) / 1000).toFixed(1);
}

/** Every fault kind a scenario can count, in report order. */
export const REPORTED_FAULT_KINDS: readonly FaultKind[] = [...FAULT_KINDS, 'killMajority'];
