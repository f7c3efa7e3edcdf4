// What a chaos scenario prints: a summary table of one run (operations, faults by kind, each
// violation count), the checker's report with history excerpts when it is invalid, and a
// markdown row per run for the README's table.

import { VIOLATION_CATEGORIES, formatReport } from './report.js';
import type { BacklogSummary } from './backlog.js';
import {
  BACKLOG_PAYLOAD_KIB_DEFAULT,
  REPORTED_FAULT_KINDS,
  type Recovery,
  type ScenarioResult,
} from './scenario.js';

/** The command that replays a run's schedule, workload and backlog (timing still varies). */
export function replayCommand(
  result: Pick<ScenarioResult, 'seed' | 'durationMs'> &
    Partial<Pick<ScenarioResult, 'backlogMiB' | 'backlogPayloadKiB'>>,
): string {
  const minutes = Number((result.durationMs / 60_000).toFixed(3));
  const mib = result.backlogMiB ?? 0;
  const kib = result.backlogPayloadKiB ?? BACKLOG_PAYLOAD_KIB_DEFAULT;
  const backlog = mib === 0 ? '' : ` --backlog-mib ${mib}`;
  const sized = mib > 0 && kib !== BACKLOG_PAYLOAD_KIB_DEFAULT;
  const payload = sized ? ` --backlog-payload-kib ${kib}` : '';
  return `npm run chaos -- --minutes ${minutes} --seed ${result.seed}${backlog}${payload}`;
}

/** The backlog's line of the run summary: what the fill stored, how fast, what was unsure. */
function backlogLine(backlog: BacklogSummary): string {
  const mib = (backlog.bytesStored / 2 ** 20).toFixed(0);
  const seconds = backlog.fillMs / 1000;
  const rate = seconds > 0 ? backlog.bytesStored / 2 ** 20 / seconds : 0;
  return (
    `  backlog ${mib} MiB stored: ${backlog.messagesStored} messages of ` +
    `${backlog.payloadBytes / 1024} KiB (${backlog.messagesPlanned} planned, ` +
    `${backlog.messagesSent} sent) in ${seconds.toFixed(1)} s ` +
    `(${rate.toFixed(1)} MiB/s); indeterminate ${backlog.indeterminate}, refused ` +
    `${backlog.refused}${backlog.complete ? '' : ', fill bound ran out'}` +
    (backlog.readBack === undefined ? '' : `; read back intact ${backlog.readBack}`)
  );
}

/** The slowest recoveries (a wipe's: until rebuilt), for the run summary. */
function recoveryLine(recoveries: readonly Recovery[]): string {
  const slowest = [...recoveries].sort((a, b) => b.ms - a.ms).slice(0, RECOVERIES_SHOWN);
  const items = slowest.map((r) => `${shortLabel(r.label)} ${(r.ms / 1000).toFixed(1)} s`);
  return `  slowest recoveries: ${items.length === 0 ? 'none' : items.join('; ')}`;
}

const RECOVERIES_SHOWN = 5;
/** A corrupt episode's label lists every record it flipped: the summary keeps the start. */
const LABEL_CHARS_MAX = 40;

function shortLabel(label: string): string {
  return label.length <= LABEL_CHARS_MAX ? label : `${label.slice(0, LABEL_CHARS_MAX)}...`;
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
    recoveryLine(result.recoveries),
  ];
  if (result.backlog !== null) header.push(backlogLine(result.backlog));
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
