// The start-up failures a person makes most (a port taken, a data directory another process
// holds, an address this machine does not have) as one sentence with the cause and the fix,
// instead of a JSON stack trace. Anything else stays a logged error.

interface SystemError {
  readonly code?: string;
  readonly syscall?: string;
  readonly address?: string;
  readonly port?: number;
  readonly message?: string;
  readonly cause?: unknown;
}

function messagesOf(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    parts.push(String((e as SystemError).message ?? e));
    e = (e as SystemError).cause;
  }
  return parts.join(' | ');
}

/** One sentence for a known start-up failure, else null. */
export function startFailureSentence(error: unknown): string | null {
  const e = (error ?? {}) as SystemError;
  const where = e.address === undefined ? `port ${e.port}` : `${e.address}:${e.port}`;
  if (e.code === 'EADDRINUSE') {
    return `${where} is already in use by another process: stop it, or choose another port ` +
      '(--port, --admin-port, --listen)';
  }
  if (e.code === 'EACCES' && e.syscall === 'listen') {
    return `not allowed to listen on ${where} (ports below 1024 need privileges): ` +
      'choose another port';
  }
  if (e.code === 'EADDRNOTAVAIL') {
    return `${e.address} is not an address of this machine: pass --host 0.0.0.0 or one of its own`;
  }
  const text = messagesOf(error);
  const lock = /lock (\S+)\/log\/LOCK: Resource temporarily unavailable/.exec(text);
  if (lock !== null) {
    return `the data directory ${lock[1]} is in use by another mq process (it holds the lock): ` +
      'stop that process, or pass another --data';
  }
  return null;
}
