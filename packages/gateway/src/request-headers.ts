// One pass over a request's headers collecting what the gateway reads: the few standard headers
// and every `Svc-*` header. Repetition is only visible in Node's raw header list (a `Headers`
// object joins duplicates with ", "), so the raw list is preferred when the server provides it.

import { MqError, invalidArgument } from '@spoolmq/engine';

export interface RequestHeaders {
  readonly authorization: string | undefined;
  readonly contentLength: string | undefined;
  readonly transferEncoding: string | undefined;
  readonly contentType: string | undefined;
  /** `Svc-*` headers by lower-case name, first value when repeated. */
  readonly svc: ReadonlyMap<string, string>;
  /** Lower-case name of the first `Svc-*` header sent more than once, if any. */
  readonly svcRepeated: string | undefined;
}

interface MutableHeaders {
  authorization: string | undefined;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  contentType: string | undefined;
  svc: Map<string, string>;
  svcRepeated: string | undefined;
}

function note(into: MutableHeaders, rawName: string, value: string): void {
  const name = rawName.toLowerCase();
  if (name.startsWith('svc-')) {
    if (into.svc.has(name)) into.svcRepeated ??= name;
    else into.svc.set(name, value);
    return;
  }
  switch (name) {
    case 'authorization':
      into.authorization ??= value;
      return;
    case 'content-length':
      into.contentLength ??= value;
      return;
    case 'transfer-encoding':
      into.transferEncoding ??= value;
      return;
    case 'content-type':
      into.contentType ??= value;
      return;
    default:
      return;
  }
}

/**
 * Collects the headers the gateway reads. `rawHeaders` is Node's alternating name/value list
 * (authoritative, shows repetition); without it the `Headers` object is read instead.
 */
export function scanHeaders(
  rawHeaders: readonly string[] | undefined,
  headers: Headers,
): RequestHeaders {
  const into: MutableHeaders = {
    authorization: undefined,
    contentLength: undefined,
    transferEncoding: undefined,
    contentType: undefined,
    svc: new Map(),
    svcRepeated: undefined,
  };
  if (rawHeaders !== undefined) {
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      note(into, rawHeaders[i] as string, rawHeaders[i + 1] as string);
    }
  } else {
    headers.forEach((value, name) => note(into, name, value));
  }
  return into;
}

/** `svc-dedup-string` -> `Svc-Dedup-String`: the spelling errors report. */
export function canonicalHeaderName(lowerName: string): string {
  return lowerName
    .split('-')
    .map((part) => (part.length === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join('-');
}

/**
 * Enforces the `Svc-*` rules of one operation: a header outside `allowed` (lower-case names) is
 * 400 unknown_header (details.header); a repeated or empty one is 400 invalid_argument.
 */
export function checkSvcHeaders(headers: RequestHeaders, allowed: ReadonlySet<string>): void {
  for (const name of headers.svc.keys()) {
    if (!allowed.has(name)) {
      const header = canonicalHeaderName(name);
      throw new MqError('unknown_header', `header ${header} is not accepted by this operation`, {
        header,
      });
    }
  }
  if (headers.svcRepeated !== undefined) {
    const header = canonicalHeaderName(headers.svcRepeated);
    throw invalidArgument(header, `header ${header} must not be repeated`);
  }
  for (const [name, value] of headers.svc) {
    if (value.length === 0) {
      const header = canonicalHeaderName(name);
      throw invalidArgument(header, `header ${header} must not be empty`);
    }
  }
}

/** Lower-case names of the `Svc-*` request headers some operation defines. */
export const SVC = {
  lease: 'svc-lease',
  handle: 'svc-handle',
  delay: 'svc-delay',
  delaySeconds: 'svc-delay-seconds',
  dedupString: 'svc-dedup-string',
  dedupHash: 'svc-dedup-hash',
  queue: 'svc-queue',
} as const;
