// Option helpers shared by `mq serve`, `mq member` and `mq gateway`: a setting comes from its
// flag, else from its environment variable, else from a default; every value is checked here so
// a bad one is a usage error (exit 2) before anything starts.

import { parseHost, parsePort } from './args.js';
import { UsageError } from './usage-error.js';

export type Env = Readonly<Record<string, string | undefined>>;
type Flags = Record<string, string | boolean | undefined>;

/** Default address of the HTTP API and of a member's own HTTP listener. */
export const HTTP_HOST_DEFAULT = '127.0.0.1';
export const HTTP_PORT_DEFAULT = 8080;
/** Members (or peers) a list may name at most: far more than any Raft group should have. */
export const MEMBERS_MAX = 64;

const MEMBER_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export interface HttpListen {
  readonly host: string;
  /** 0-65535; 0 picks a free port. */
  readonly port: number;
}

/**
 * The flag's value if given, else the environment variable's, else undefined. A flag or variable
 * set to the empty string counts as given (and is then refused by the value's own check).
 */
export function flagOrEnv(
  flags: Flags,
  flag: string,
  env: Env,
  variable: string,
): { value: string; source: string } | undefined {
  const fromFlag = flags[flag];
  if (typeof fromFlag === 'string') return { value: fromFlag, source: `--${flag}` };
  const fromEnv = env[variable];
  if (fromEnv !== undefined) return { value: fromEnv, source: variable };
  return undefined;
}

/** `--host`/MQ_HOST and `--port`/MQ_PORT, flags winning. Throws UsageError for a bad value. */
export function httpListenOf(flags: Flags, env: Env): HttpListen {
  const port = flagOrEnv(flags, 'port', env, 'MQ_PORT');
  const host = flagOrEnv(flags, 'host', env, 'MQ_HOST');
  return {
    host: host === undefined ? HTTP_HOST_DEFAULT : parseHost(host.value, host.source),
    port: port === undefined ? HTTP_PORT_DEFAULT : parsePort(port.value, port.source),
  };
}

/**
 * Checks a gRPC address `host:port` (`[v6]:port` too) with a port 1-65535, or 0 when
 * `allowAnyPort` (a listen address). Throws UsageError naming `source`.
 */
export function parseGrpcAddress(text: string, source: string, allowAnyPort = false): string {
  const colon = text.lastIndexOf(':');
  const host = colon < 0 ? '' : text.slice(0, colon);
  const port = colon < 0 ? '' : text.slice(colon + 1);
  // A v6 host must be bracketed, or its colons would be read as the port separator.
  const bracketed = !host.includes(':') || /^\[.+\]$/.test(host);
  const validHost = host !== '' && !/[\s,=]/.test(host) && bracketed;
  const portNumber = Number(port);
  const validPort =
    /^\d{1,5}$/.test(port) && portNumber <= 65_535 && (allowAnyPort || portNumber > 0);
  if (!validHost || !validPort) {
    throw new UsageError(`${source}: '${text}' is not an address host:port`);
  }
  return text;
}

/**
 * Parses a member list `id=host:port,id=host:port,...` (spaces around entries ignored) into
 * id -> address. Ids are 1-64 of [A-Za-z0-9_.-], unique; 1..MEMBERS_MAX entries. Throws
 * UsageError naming `source`.
 */
export function parseMemberList(text: string, source: string): Record<string, string> {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length > MEMBERS_MAX) {
    throw new UsageError(`${source}: more than ${MEMBERS_MAX} members`);
  }
  const members: Record<string, string> = {};
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const id = equals < 0 ? entry : entry.slice(0, equals);
    if (equals < 0 || !MEMBER_ID.test(id)) {
      throw new UsageError(
        `${source}: '${entry}' is not id=host:port (id: 1-64 of A-Z a-z 0-9 _ . -)`,
      );
    }
    if (Object.hasOwn(members, id)) {
      throw new UsageError(`${source}: member '${id}' is listed twice`);
    }
    members[id] = parseGrpcAddress(entry.slice(equals + 1), `${source} (${id})`);
  }
  return members;
}

/** Checks a member id (1-64 of [A-Za-z0-9_.-]). Throws UsageError naming `source`. */
export function parseMemberId(text: string, source: string): string {
  if (!MEMBER_ID.test(text)) {
    throw new UsageError(`${source} must be 1-64 of A-Z a-z 0-9 _ . -, got '${text}'`);
  }
  return text;
}

/** Checks a data directory path (non-empty). Throws UsageError naming `source`. */
export function parseDataDir(text: string, source: string): string {
  if (text === '') throw new UsageError(`${source} must be a directory path, got ''`);
  return text;
}

/** `http://host:port/v1` (IPv6 hosts bracketed). */
export function apiBaseUrl(host: string, port: number, secure = false): string {
  const shown = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${secure ? 'https' : 'http'}://${shown}:${port}/v1`;
}

/** Resolves when `signal` aborts (at once if it already has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
