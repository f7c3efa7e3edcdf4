// Strict query strings: each operation names the parameters it takes and how many times each may
// appear. An unknown parameter, or one repeated beyond its count, is 400 invalid_argument.

import { invalidArgument } from '@spoolmq/engine';
import { QUERY_PARAMS_MAX } from './options.js';

/** Parameter name -> how many times it may appear (1 for a scalar). */
export type QueryShape = Readonly<Record<string, number>>;

export const NO_QUERY: QueryShape = {};

const EMPTY: ReadonlyMap<string, readonly string[]> = new Map();

export class Query {
  constructor(private readonly values: ReadonlyMap<string, readonly string[]>) {}

  /** The single value of `name`, or undefined when absent. */
  one(name: string): string | undefined {
    return this.values.get(name)?.[0];
  }

  /** Every value of `name` in request order (empty when absent). */
  many(name: string): readonly string[] {
    return this.values.get(name) ?? [];
  }
}

/**
 * Parses the query string of `url` against `shape`. Throws invalid_argument (details.field the
 * parameter) for a parameter the shape lacks, one repeated beyond its count, or more than
 * QUERY_PARAMS_MAX parameters in all.
 */
export function parseQuery(url: string, shape: QueryShape): Query {
  const mark = url.indexOf('?');
  if (mark < 0 || mark === url.length - 1) return new Query(EMPTY);
  const values = new Map<string, string[]>();
  let count = 0;
  for (const [name, value] of new URLSearchParams(url.slice(mark + 1))) {
    count += 1;
    if (count > QUERY_PARAMS_MAX) {
      throw invalidArgument('query', `at most ${QUERY_PARAMS_MAX} query parameters`);
    }
    const allowed = Object.hasOwn(shape, name) ? (shape[name] as number) : 0;
    if (allowed === 0) throw invalidArgument(name, `unknown query parameter ${name}`);
    const list = values.get(name);
    if (list === undefined) {
      values.set(name, [value]);
    } else if (list.length >= allowed) {
      const message =
        allowed === 1 ? `${name} must not be repeated` : `at most ${allowed} ${name} parameters`;
      throw invalidArgument(name, message);
    } else {
      list.push(value);
    }
  }
  return new Query(values);
}
