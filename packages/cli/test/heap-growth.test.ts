import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  HEAP_GROWTH_PERCENT_DEFAULT,
  applyHeapGrowth,
  heapGrowthOf,
} from '../src/heap-growth.js';

const BUILT = fileURLToPath(new URL('../dist/heap-growth.js', import.meta.url));

describe('heap growth', () => {
  it('reads the percent from the flag over the environment, and nothing when not given', () => {
    expect(heapGrowthOf({ 'heap-growth': '25' }, { MQ_HEAP_GROWTH: '200' })).toEqual({
      heapGrowthPercent: 25,
    });
    expect(heapGrowthOf({}, { MQ_HEAP_GROWTH: '300' })).toEqual({ heapGrowthPercent: 300 });
    expect(heapGrowthOf({}, {})).toEqual({});
  });

  it('refuses a percent outside 10-300 or not an integer, naming its source', () => {
    for (const bad of ['9', '301', '1e2', '50.5', '-20', '', 'fifty']) {
      expect(() => heapGrowthOf({ 'heap-growth': bad }, {})).toThrow(/--heap-growth.*10-300/);
    }
    expect(() => heapGrowthOf({}, { MQ_HEAP_GROWTH: '0' })).toThrow(/MQ_HEAP_GROWTH/);
  });

  it('sets V8 heap growing factor, the default when none was given', () => {
    const set: string[] = [];
    applyHeapGrowth({}, (flags) => set.push(flags));
    applyHeapGrowth({ heapGrowthPercent: 120 }, (flags) => set.push(flags));
    expect(set).toEqual([
      `--heap-growing-percent=${HEAP_GROWTH_PERCENT_DEFAULT}`,
      '--heap-growing-percent=120',
    ]);
  });

  it('takes effect in a running process: later full collections grow the limit by it', () => {
    // V8 prints each new allocation limit with its factor; a process that applies 20% after
    // startup must collect with 1.2 from then on (V8's own factor here is up to 4.0).
    const script = `
      const { applyHeapGrowth } = await import(${JSON.stringify(BUILT)});
      applyHeapGrowth({ heapGrowthPercent: 20 });
      console.log('applied');
      const kept = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'k' + i }));
      let churn = [];
      for (let i = 0; i < 6e6; i++) { churn.push({ i }); if (churn.length > 5e5) churn = []; }
      console.log('kept', kept.length);`;
    const run = spawnSync(
      process.execPath,
      ['--trace-gc-verbose', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status).toBe(0);
    const after = run.stdout.slice(run.stdout.indexOf('applied'));
    const factors = [...after.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)/g)].map(
      (m) => m[1],
    );
    expect(factors.length).toBeGreaterThan(0);
    expect(new Set(factors)).toEqual(new Set(['1.2']));
  });
});
