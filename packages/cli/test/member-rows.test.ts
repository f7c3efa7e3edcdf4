import { Families } from '@spoolmq/gateway';
import { describe, expect, it } from 'vitest';
import { type MemberRow, addMemberRows } from '../src/member-rows.js';

interface Source {
  readonly on: boolean;
  readonly count: number;
  readonly known: number | null;
}

const ROWS: readonly MemberRow<Source>[] = [
  ['t_on', 'gauge', 'A flag.', (s) => s.on],
  ['t_count_total', 'counter', 'A count.', (s) => s.count],
  ['t_known_bytes', 'gauge', 'Known or not.', (s) => s.known],
];

describe('addMemberRows', () => {
  it('adds one series per row for the member, none for a null value', () => {
    const out = new Families();
    addMemberRows(out, 'n1', ROWS, { on: true, count: 7, known: null });
    const text = out.text();
    expect(text).toContain('# TYPE t_on gauge\nt_on{member="n1"} 1\n');
    expect(text).toContain('# TYPE t_count_total counter\nt_count_total{member="n1"} 7\n');
    expect(text).not.toContain('t_known_bytes{');
  });
});
