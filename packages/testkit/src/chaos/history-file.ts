// Saving a history to disk and loading it back, so a failing chaos run can be re-checked (and
// the checker debugged) without running the cluster again.

import { readFile, writeFile } from 'node:fs/promises';
import { History, type HistoryOptions, parseHistoryJsonl } from './history.js';

/** Writes `history` as JSONL to `path` (replacing the file). Rejects on I/O errors. */
export async function writeHistoryFile(path: string, history: History): Promise<void> {
  await writeFile(path, history.toJsonl(), 'utf8');
}

/**
 * Reads a JSONL history written by `writeHistoryFile`. Rejects on I/O errors and with `Error`
 * when a line is malformed or the events are inconsistent.
 */
export async function readHistoryFile(
  path: string,
  options: HistoryOptions = {},
): Promise<History> {
  const text = await readFile(path, 'utf8');
  return History.fromEvents(parseHistoryJsonl(text), options);
}
