// What a chaos scenario prints: a summary table of one run (operations, faults by kind, each
// violation count), the checker's report with history excerpts when it is invalid, and a
// markdown row per run for the README's table.

import { VIOLATION_CATEGORIES, formatReport } from './report.js';
import { REPORTED_FAULT_KINDS, type ScenarioResult } from './scenario.js';

/** The command that replays a run's schedule and workload (timing still varies). */
export function replayCommand(result: Pick<ScenarioResult, 'seed' | 'durationMs'>): string {
  const minutes = Number((result.durationMs / 60_000).toFixed(3));
  return `npm run chaos -- --minutes ${minutes} --seed ${result.seed}`;
}

/** The run summary, then the checker's report (examples and history lines when invalid). */
export function formatScenario(result: ScenarioResult): string {
  const { report, faults } = result;
  const faultTotal = REPORTED_FAULT_KINDS.reduce((sum, kind) => sum + faults[kind], 0);
  const byKind = REPORTED_FAULT_KINDS.map((kind) => `${kind} ${faults[kind]}`).join(', ');
  const seconds = (ms: number): string => (ms / 1000).toFixed(1);
  const header = [
    `chaos run: seed ${result.seed}, fault phase ${seconds(result.faultPhaseMs)} s ` +
      `(scheduled ${seconds(result.durationMs)} s), wall ${seconds(result.wallMs)} s`,
    `  replay: ${replayCommand(result)}`,
    `  workload operations ${result.workload.operations}, drain acked ${result.drain.acked} ` +
      `(drained: ${result.drain.drained})`,
    `  faults ${faultTotal}: ${byKind}`,
  ];
  if (result.historyPath !== null) {
    header.push(`  history: ${result.historyPath}`, `  data and logs: ${result.rootDir}`);
  }
  return formatReport(report, header);
}

/** Column headers of `markdownRow`. */
export function markdownHeader(): string {
  const columns = ['seed', 'minutes', 'operations', 'faults (by kind)', ...VIOLATION_CATEGORIES];
  return `| ${columns.join(' | ')} |\n|${columns.map(() => '---').join('|')}|`;
}

/**
 * One README table row: seed, minutes of faults (as run), operations, faults by kind, every
 * violation count.
 */
export function markdownRow(result: ScenarioResult): string {
  const kinds = REPORTED_FAULT_KINDS.filter((kind) => result.faults[kind] > 0);
  const faults = kinds.map((kind) => `${kind} ${result.faults[kind]}`).join(', ');
  const counts = VIOLATION_CATEGORIES.map((c) => String(result.report.violations[c].count));
  const minutes = (result.faultPhaseMs / 60_000).toFixed(1);
  const cells = [String(result.seed), minutes, String(result.report.counts.operations), faults];
  return `| ${[...cells, ...counts].join(' | ')} |`;
}
