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

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessCluster } from '../cluster/process-cluster.js';
import { metricSamples } from '../cluster/metrics-text.js';
import { check } from './checker.js';
import type { FinalState } from './final-state.js';
import { FaultInjector, type FaultCounts } from './fault-injector.js';
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
}

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
    const run = await exercise(options, cluster, mesh, schedule);
    const historyPath = run.report.valid ? null : await keepEvidence(rootDir, options.seed, run);
    removeRoot = run.report.valid && options.keepFiles !== true && options.rootDir === undefined;
    const { faults, workload, drain, report, faultPhaseMs } = run;
    const wallMs = performance.now() - startedMs;
    const { seed } = options;
    const { durationMs } = schedule;
    const counts = { faults, workload, drain, report, faultPhaseMs };
    return { seed, durationMs, schedule, ...counts, historyPath, rootDir, wallMs };
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

interface Exercised {
  readonly history: History;
  readonly final: FinalState;
  readonly faults: FaultCounts;
  readonly workload: WorkloadSummary;
  readonly drain: DrainSummary;
  readonly report: CheckReport;
  readonly faultPhaseMs: number;
}

/** Start, workload under faults, heal, drain, converge, collect, check. */
async function exercise(
  options: ScenarioOptions,
  cluster: ProcessCluster,
  mesh: ProxyMesh,
  schedule: Schedule,
): Promise<Exercised> {
  const log = options.log ?? ((): void => undefined);
  const model = defaultWorkloadModel(options.seed, options.workload);
  cluster.setPeersFor((id) => mesh.peersFor(id));
  cluster.setGatewayMembers(() => mesh.peersFor('gateway'));
  const episodes = schedule.episodes.length;
  log(`chaos: seed ${options.seed}, ${episodes} episodes, data in ${cluster.rootDir}`);
  await cluster.start();
  await cluster.waitReady(SETTLE_TIMEOUT_MS);
  // The harness's test account (its spools are the ones primaryOf and the workload name).
  const apiKey = await retried(() => cluster.apiKey());
  const target: WorkloadTarget = { baseUrl: cluster.baseUrl, apiKey };
  await retried(() => setupQueues(model, target));
  const history = new History();
  const injector = new FaultInjector(cluster, mesh, model.spool);
  const faultStartMs = performance.now();
  const workload = await underFaults(
    (signal) =>
      runWorkload({ model, target, history, durationMs: workloadBoundMs(schedule), signal }),
    () => runEpisodes(schedule, injector, history, log),
  );
  const faultPhaseMs = performance.now() - faultStartMs;
  log(`chaos: faults done; ${workload.operations} workload operations; settling`);
  mesh.heal();
  await cluster.waitReady(SETTLE_TIMEOUT_MS);
  log('chaos: healed and ready; draining');
  const drain = await drainQueues({ model, target, history, boundMs: DRAIN_BOUND_MS });
  log(`chaos: drained ${drain.acked} (${drain.drained ? 'empty' : 'not empty'}); converging`);
  await waitConverged(cluster);
  log('chaos: converged; reading the final state');
  const final = await retried(() => collectFinalState({ model, target, history }));
  const logViolations = await unrepairedPayloads(join(cluster.rootDir, 'logs'));
  const report = withLogViolations(check(history, final), logViolations, LOG_EXAMPLES_MAX);
  return { history, final, faults: injector.counts, workload, drain, report, faultPhaseMs };
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

/** The workload's own bound: the schedule, doubled for late episodes, plus a margin. */
function workloadBoundMs(schedule: Schedule): number {
  return 2 * schedule.durationMs + WORKLOAD_MARGIN_MS;
}

/** Writes the history (JSONL) and the final state next to the logs; returns the history path. */
async function keepEvidence(rootDir: string, seed: number, run: Exercised): Promise<string> {
  const historyPath = join(rootDir, `history-seed-${seed}.jsonl`);
  await writeHistoryFile(historyPath, run.history);
  const finalPath = join(rootDir, `final-seed-${seed}.json`);
  await writeFile(finalPath, `${JSON.stringify(run.final, null, 1)}\n`, 'utf8');
  return historyPath;
}

/** Injects every episode at its time (see the file comment) and flags its window. */
async function runEpisodes(
  schedule: Schedule,
  injector: FaultInjector,
  history: History,
  log: (line: string) => void,
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
    try {
      await fault.recover();
    } finally {
      history.markWindow(fault.label, injectedAtMs, history.now() + quietMs);
    }
    log(`chaos: +${elapsedS(originMs)} s recovered from ${fault.label}`);
    earliestMs = performance.now() + quietMs;
  }
}

/**
 * Resolves once every member hosts the same Raft groups at the same applied index: the wiped
 * member was rebuilt, the others caught up. Rejects after CONVERGE_TIMEOUT_MS with what differs.
 */
async function waitConverged(cluster: ProcessCluster): Promise<void> {
  const deadlineMs = performance.now() + CONVERGE_TIMEOUT_MS;
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
  throw new Error(`members did not converge within ${CONVERGE_TIMEOUT_MS} ms: ${last}`);
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
