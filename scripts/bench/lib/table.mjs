// Plain-text tables for benchmark reports.

/**
 * Formats rows as an aligned table; numbers are right-aligned with thousands separators.
 * @param {string[]} headers
 * @param {Array<Array<string | number>>} rows
 * @returns {string}
 */
export function formatTable(headers, rows) {
  const cells = rows.map((row) => row.map(formatCell));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row, numeric) =>
    row.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ').trimEnd();
  const numericColumns = headers.map((_, i) => rows.every((row) => typeof row[i] === 'number'));
  return [line(headers, numericColumns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map((row) => line(row, numericColumns))].join('\n');
}

/** Prints a table to stdout with a blank line after it. */
export function printTable(headers, rows) {
  process.stdout.write(`${formatTable(headers, rows)}\n\n`);
}

function formatCell(value) {
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value)) return '-';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 });
}
