import { describe, expect, it } from 'vitest';
import { PrimaryTable } from '../../src/remote/primary-table.js';

describe('PrimaryTable', () => {
  it('round-robins spools with an unknown primary and sticks to a learned one', () => {
    const table = new PrimaryTable(['a', 'b', 'c'], 10);
    expect([table.firstFor('s1'), table.firstFor('s2'), table.firstFor('s3'), table.firstFor('s4')]).toEqual(['a', 'b', 'c', 'a']);
    table.learn('s1', 'c');
    expect(table.firstFor('s1')).toBe('c');
    expect(table.primaryOf('s1')).toBe('c');
    expect(table.after('c')).toBe('a');
  });

  it('is all-known only when every tracked spool has a primary', () => {
    const table = new PrimaryTable(['a'], 10);
    expect(table.allKnown()).toBe(true);
    table.track('default');
    expect(table.allKnown()).toBe(false);
    expect(table.unknown(5)).toEqual(['default']);
    table.learn('default', 'a');
    expect(table.allKnown()).toBe(true);
    table.forget('default', 'b'); // not its primary: no change
    expect(table.allKnown()).toBe(true);
    table.forget('default', 'a');
    expect(table.allKnown()).toBe(false);
  });

  it('forgets the oldest spools past spoolsTrackedMax', () => {
    const table = new PrimaryTable(['a'], 2);
    table.track('s1');
    table.learn('s2', 'a');
    table.track('s3');
    expect(table.unknown(10)).toEqual(['s3']);
    expect(table.primaryOf('s2')).toBe('a');
  });

  it('refuses member lists that make no sense', () => {
    expect(() => new PrimaryTable([], 1)).toThrow();
    expect(() => new PrimaryTable(['a', 'a'], 1)).toThrow();
    expect(() => new PrimaryTable(['a'], 0)).toThrow();
  });
});
