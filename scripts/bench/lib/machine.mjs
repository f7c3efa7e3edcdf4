// Describes the machine a benchmark ran on, so a number is never read without its context.
import os from 'node:os';

/**
 * @returns {{cpuModel: string, cores: number, node: string, platform: string, totalMemBytes: number, loadAvg1m: number}}
 *   cpu model, logical core count, Node version, OS/arch, memory, and the 1-minute load average
 *   when the benchmark started (the cores are shared, so a high value explains a low number).
 */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    totalMemBytes: os.totalmem(),
    loadAvg1m: Number(os.loadavg()[0].toFixed(2)),
  };
}

/** One line for the top of a printed report. */
export function machineLine(info = machineInfo()) {
  return `machine: ${info.cpuModel}, ${info.cores} cores, node ${info.node}, ${info.platform}, load ${info.loadAvg1m}`;
}
