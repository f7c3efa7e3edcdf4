// RE2 `match` predicates for listings, compiled once and cached (bounded). re2-wasm keeps each
// compiled pattern in its fixed wasm heap until its wrapper is deleted, so an evicted pattern is
// deleted explicitly. The gateway vets patterns (syntax and compile cost) before they reach here.

import { createRequire } from 'node:module';
import { MqError } from '@spoolmq/engine';
import type re2Module from 're2-wasm';

/** Compiled patterns kept. */
const PATTERNS_MAX = 64;

type Re2 = typeof re2Module;
type Compiled = InstanceType<Re2['RE2']>;

const require = createRequire(import.meta.url);
let loaded: Re2 | undefined;

/**
 * re2-wasm, loaded at the first pattern: its wasm instance (a fixed 16 MiB heap) costs a process
 * RSS and V8 external memory from the start, and most processes never see a `match`.
 */
function re2(): Re2 {
  return (loaded ??= require('re2-wasm') as Re2);
}

interface Entry {
  readonly compiled: Compiled;
  readonly test: (name: string) => boolean;
}

export class PatternCache {
  private readonly entries = new Map<string, Entry>();

  /**
   * A predicate testing names against `pattern` (unanchored). Throws 400 invalid_argument (match).
   */
  matcher(pattern: string): (name: string) => boolean {
    const cached = this.entries.get(pattern);
    if (cached !== undefined) {
      this.entries.delete(pattern);
      this.entries.set(pattern, cached);
      return cached.test;
    }
    let compiled: Compiled;
    try {
      compiled = new (re2().RE2)(pattern, 'u');
    } catch {
      throw new MqError('invalid_argument', 'match is not a valid RE2 pattern', { field: 'match' });
    }
    if (this.entries.size >= PATTERNS_MAX) {
      const [oldest, entry] = this.entries.entries().next().value!;
      this.entries.delete(oldest);
      release(entry.compiled);
    }
    const entry: Entry = { compiled, test: (name) => compiled.test(name) };
    this.entries.set(pattern, entry);
    return entry.test;
  }

  /** Frees every compiled pattern. */
  clear(): void {
    for (const entry of this.entries.values()) release(entry.compiled);
    this.entries.clear();
  }
}

function release(compiled: Compiled): void {
  // The wrapper is private in re2-wasm's typings; it is an embind object with delete().
  const wrapper = (compiled as unknown as { wrapper?: { delete?: () => void } }).wrapper;
  wrapper?.delete?.();
}
