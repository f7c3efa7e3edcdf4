// Strict parsing of the scalar values that arrive in paths, headers and query strings. Every
// function either returns the value or throws `MqError` invalid_argument naming the field.

import { invalidArgument } from '@spoolmq/engine';

const NAME_PATTERN = /^[A-Za-z0-9_:-]{1,63}$/;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;
const DIGITS_PATTERN = /^[0-9]{1,16}$/;

/**
 * Parses a decimal integer written as plain digits (no sign, spaces, exponent or point) within
 * `[min, max]` (both safe integers). Throws invalid_argument naming `field` otherwise.
 */
export function parseInteger(field: string, text: string, min: number, max: number): number {
  if (!DIGITS_PATTERN.test(text)) {
    throw invalidArgument(field, `${field} must be an integer written as plain digits`);
  }
  const value = Number(text);
  if (value < min || value > max) {
    throw invalidArgument(field, `${field} must be between ${min} and ${max}`);
  }
  return value;
}

/** Parses exactly `true` or `false`; anything else throws invalid_argument naming `field`. */
export function parseBoolean(field: string, text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw invalidArgument(field, `${field} must be true or false`);
}

/** Returns `text` when it is exactly one of `allowed` (case-sensitive), else invalid_argument. */
export function parseEnum<T extends string>(field: string, text: string, allowed: readonly T[]): T {
  for (const value of allowed) {
    if (value === text) return value;
  }
  throw invalidArgument(field, `${field} must be one of ${allowed.join(', ')}`);
}

/** Checks a spool or queue name: `^[A-Za-z0-9_:-]{1,63}$`; else invalid_argument. */
export function checkName(field: string, text: string): string {
  if (!NAME_PATTERN.test(text)) {
    throw invalidArgument(field, `${field} must match ^[A-Za-z0-9_:-]{1,63}$`);
  }
  return text;
}

/** Whether `text` is a well-formed spool or queue name. */
export function isName(text: string): boolean {
  return NAME_PATTERN.test(text);
}

/**
 * Checks the syntax of a lease or handle token: `^[A-Za-z0-9_-]{16,128}$`; else invalid_argument.
 * Whether it verifies is the service's business.
 */
export function checkToken(field: string, text: string): string {
  if (!TOKEN_PATTERN.test(text)) {
    throw invalidArgument(field, `${field} must match ^[A-Za-z0-9_-]{16,128}$`);
  }
  return text;
}

/** Checks a listing cursor: 1-256 characters (its content is the service's to verify). */
export function checkCursor(field: string, text: string): string {
  if (text.length < 1 || text.length > 256) {
    throw invalidArgument(field, `${field} must be 1-256 characters`);
  }
  return text;
}
