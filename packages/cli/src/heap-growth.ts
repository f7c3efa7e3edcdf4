// `--heap-growth` (MQ_HEAP_GROWTH): how far V8 lets a server process's memory grow past what
// its last full collection kept before it collects again, in percent. On a machine with memory
// to spare V8 allows up to 300% (a factor of 4), so a broker whose live heap and buffers are
// 60 MB sits at 240 MB between collections; and the payload buffers freed late stay in the C
// allocator's arena afterwards, part of the resident set for good. A broker's live set is small
// and bounded (caches and metadata), and collecting it is cheap, so mq asks for less headroom by
// default: `npm run bench -- compare` measured the peak resident set of `mq serve` against the
// same run without it (see the README's "Memory" section).

import { setFlagsFromString } from 'node:v8';
import { parseIntegerIn } from './args.js';
import { type Env, flagOrEnv } from './cluster-options.js';

type Flags = Record<string, string | boolean | undefined>;

export const HEAP_GROWTH_PERCENT_DEFAULT = 50;
const HEAP_GROWTH_PERCENT_MIN = 10;
const HEAP_GROWTH_PERCENT_MAX = 300;

export const HEAP_GROWTH_FLAGS = {
  'heap-growth': { type: 'string' },
} as const;

export const HEAP_GROWTH_USAGE = `\
  --heap-growth PERCENT
                      How far the heap and its buffers may grow past what the last full
                      garbage collection kept before the next one: less memory, more
                      collecting. An integer ${HEAP_GROWTH_PERCENT_MIN}-\
${HEAP_GROWTH_PERCENT_MAX}, default ${HEAP_GROWTH_PERCENT_DEFAULT}. Env MQ_HEAP_GROWTH.`;

export interface HeapGrowthOptions {
  /** Default HEAP_GROWTH_PERCENT_DEFAULT. */
  readonly heapGrowthPercent?: number;
}

/** The heap growth percent when given (flag over environment). */
export function heapGrowthOf(flags: Flags, env: Env): HeapGrowthOptions {
  const given = flagOrEnv(flags, 'heap-growth', env, 'MQ_HEAP_GROWTH');
  if (given === undefined) return {};
  const { value, source } = given;
  const min = HEAP_GROWTH_PERCENT_MIN;
  return { heapGrowthPercent: parseIntegerIn(value, source, min, HEAP_GROWTH_PERCENT_MAX) };
}

/**
 * Sets V8's heap growing factor for this process (1 + percent / 100). V8 reads it at every
 * full collection, so setting it at startup, after the heap exists, takes effect from the
 * next one. A process setting; the commands that run a server call it before they start.
 */
export function applyHeapGrowth(
  options: HeapGrowthOptions,
  setFlags: (flags: string) => void = setFlagsFromString,
): void {
  const percent = options.heapGrowthPercent ?? HEAP_GROWTH_PERCENT_DEFAULT;
  setFlags(`--heap-growing-percent=${percent}`);
}
