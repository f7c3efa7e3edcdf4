// Which configuration is in force: the latest ConfChange entry in the log, committed or not
// (thesis 4.1), falling back to the configuration at the log base (from the snapshot). Truncating
// an uncommitted ConfChange entry reverts to the one before it.

import { EntryType, type ClusterConfig, type Entry } from '../types.js';
import { applyConfChange, decodeConfChange } from './conf-change.js';

export const EMPTY_CONFIG: ClusterConfig = { voters: [], learners: [] };

interface ConfigAt {
  readonly index: number;
  readonly config: ClusterConfig;
}

export class Membership {
  /** Configuration as of the log base. */
  private baseConfig: ClusterConfig;
  /** Configurations introduced by ConfChange entries above the base, ascending by index. */
  private changes: ConfigAt[] = [];

  constructor(baseConfig: ClusterConfig) {
    this.baseConfig = baseConfig;
  }

  /** The configuration in force (latest in the log). */
  current(): ClusterConfig {
    return this.changes.at(-1)?.config ?? this.baseConfig;
  }

  /** Index of the entry that introduced the current configuration (0 or the base if none). */
  currentIndex(baseIndex: number): number {
    return this.changes.at(-1)?.index ?? baseIndex;
  }

  /** The configuration in force after the entry at `index` (index >= log base). */
  configAt(index: number): ClusterConfig {
    let config = this.baseConfig;
    for (const change of this.changes) {
      if (change.index > index) break;
      config = change.config;
    }
    return config;
  }

  /**
   * Takes note of entries appended to the log, those of `entries` with index >= `fromIndex`;
   * returns true when the configuration changed.
   */
  onAppend(entries: readonly Entry[], fromIndex: number): boolean {
    let changed = false;
    for (const entry of entries) {
      if (entry.type !== EntryType.ConfChange || entry.index < fromIndex) continue;
      const next = applyConfChange(this.current(), decodeConfChange(entry.data));
      this.changes.push({ index: entry.index, config: next });
      changed = true;
    }
    return changed;
  }

  /** Entries from `index` on were removed from the log; returns true when the config reverted. */
  onTruncate(index: number): boolean {
    const before = this.changes.length;
    for (let last = this.changes.at(-1); last !== undefined && last.index >= index; ) {
      this.changes.pop();
      last = this.changes.at(-1);
    }
    return this.changes.length !== before;
  }

  /** Entries up to `index` were compacted: folds their configurations into the base. */
  onCompact(index: number): void {
    for (let first = this.changes[0]; first !== undefined && first.index <= index; ) {
      this.baseConfig = first.config;
      this.changes.shift();
      first = this.changes[0];
    }
  }

  /** The log was replaced by a snapshot carrying `config`. */
  reset(config: ClusterConfig): void {
    this.baseConfig = config;
    this.changes = [];
  }
}
