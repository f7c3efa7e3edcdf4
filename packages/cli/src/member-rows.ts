// Metric families whose one series is a field of one status object of a member (its disk and
// heap watermarks, its memory bounds, its storage engine): written as rows of name, type, help
// and the field, and added the same way.

import type { Families, MetricType } from '@spoolmq/gateway';

/** A family and how its value is read from a `T`; null leaves the family without a series. */
export type MemberRow<T> = readonly [
  name: string,
  type: MetricType,
  help: string,
  value: (source: T) => number | boolean | null,
];

/** Adds each of `rows`, read from `source`, as member `id`'s series. */
export function addMemberRows<T>(
  out: Families,
  id: string,
  rows: readonly MemberRow<T>[],
  source: T,
): void {
  const self = { member: id };
  for (const [name, type, help, value] of rows) {
    out.add(name, type, help, [source], (s) => {
      const shown = value(s);
      return shown === null ? null : [self, shown];
    });
  }
}
