// History excerpts for violation reports: the operations that show a violation, one line each.

import { formatOperation, type Operation } from './history.js';

/** Lines an excerpt holds at most; longer ones end with a line saying how many were left out. */
export const EXCERPT_LINES_MAX = 16;

/** The distinct operations, in invocation order, formatted; at most EXCERPT_LINES_MAX lines. */
export function excerptOf(operations: Iterable<Operation>): string[] {
  const byOp = new Map<number, Operation>();
  for (const operation of operations) byOp.set(operation.invoke.op, operation);
  const sorted = [...byOp.values()].sort((a, b) => a.invoke.op - b.invoke.op);
  const lines = sorted.slice(0, EXCERPT_LINES_MAX).map(formatOperation);
  if (sorted.length > EXCERPT_LINES_MAX) {
    lines.push(`... ${sorted.length - EXCERPT_LINES_MAX} more operations`);
  }
  return lines;
}
