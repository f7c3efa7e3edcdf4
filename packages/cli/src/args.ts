// Flag parsing shared by the commands: node:util parseArgs in strict mode, with its errors
// turned into UsageError, plus the value checks every listener command needs.

import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './usage-error.js';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `argv` against `options` (no positionals allowed). Throws UsageError for an unknown
 * flag, a missing value, or a stray positional.
 */
export function parseFlags(
  argv: readonly string[],
  options: OptionSpec,
): Record<string, string | boolean | undefined> {
  try {
    const args = [...argv];
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Parses a TCP port, 0-65535 (0 = any free port). Throws UsageError naming `source`. */
export function parsePort(text: string, source: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(`${source} must be a port number 0-65535, got '${text}'`);
  }
  return Number(text);
}

/**
 * Parses a whole number from `min` to `max` written in plain digits (no sign, point, exponent
 * or leading zero). Throws UsageError naming `source`.
 */
export function parseIntegerIn(text: string, source: string, min: number, max: number): number {
  const value = /^(0|[1-9]\d{0,14})$/.test(text) ? Number(text) : NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`${source} must be an integer ${min}-${max}, got '${text}'`);
  }
  return value;
}

/** Checks a host to bind: a non-empty name or address without spaces. Throws UsageError. */
export function parseHost(text: string, source: string): string {
  if (text === '' || /\s/.test(text)) {
    throw new UsageError(`${source} must be a host name or address, got '${text}'`);
  }
  return text;
}
