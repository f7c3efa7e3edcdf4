// Shared helpers for the benchmark scripts: machine description, percentiles, tables, JSON.
export { machineInfo, machineLine } from './machine.mjs';
export { percentile, summarize, Samples } from './stats.mjs';
export { formatTable, printTable } from './table.mjs';
export { writeResults, REPO_ROOT } from './results.mjs';
export { killAndWait, spawnTracked, stopChild, waitForLogLine, processCpuMs } from './processes.mjs';
export { summarizeCpuProfile } from './profile.mjs';
