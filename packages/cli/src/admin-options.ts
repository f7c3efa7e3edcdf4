// The admin listener of `mq serve` and `mq member`, and its token. The admin API is served on its
// own address (default 127.0.0.1:8081), never the public port. The token comes from MQ_ADMIN_TOKEN,
// or from a file (--admin-token-file, MQ_ADMIN_TOKEN_FILE; default <data>/admin-token); a
// missing default file is created with a random token (mode 0600), so a fresh `mq serve` is
// administrable by whoever can read its data directory.

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  ADMIN_HOST_DEFAULT,
  ADMIN_PORT_DEFAULT,
  ADMIN_TOKEN_CHARS_MIN,
  type AdminAuditRecord,
} from '@spoolmq/gateway';
import { parseHost, parsePort } from './args.js';
import { type Env, flagOrEnv } from './cluster-options.js';
import type { Logger } from './logger.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

/** The admin token file's name inside the data directory. */
export const ADMIN_TOKEN_FILE_NAME = 'admin-token';

export interface AdminListen {
  readonly adminHost: string;
  readonly adminPort: number;
  /** Where the token is read (or created); null when MQ_ADMIN_TOKEN gives it. */
  readonly adminTokenFile: string | null;
  readonly adminToken: string | null;
}

/** The flag specs every command with an admin listener takes. */
export const ADMIN_FLAGS = {
  'admin-port': { type: 'string' },
  'admin-host': { type: 'string' },
  'admin-token-file': { type: 'string' },
} as const;

export const ADMIN_USAGE = `\
  --admin-port PORT   Admin API port (never the public one). Env MQ_ADMIN_PORT.
                      Default ${ADMIN_PORT_DEFAULT}.
  --admin-host HOST   Admin API address. Env MQ_ADMIN_HOST. Default ${ADMIN_HOST_DEFAULT}.
  --admin-token-file FILE
                      File holding the admin token (created with a random token if missing).
                      Env MQ_ADMIN_TOKEN_FILE. Default <data>/${ADMIN_TOKEN_FILE_NAME}.
                      MQ_ADMIN_TOKEN (at least ${ADMIN_TOKEN_CHARS_MIN} characters) wins over it.`;

/** Resolves the admin listener settings; throws UsageError for a bad value. */
export function adminListenOf(flags: Flags, env: Env, dataDir: string): AdminListen {
  const port = flagOrEnv(flags, 'admin-port', env, 'MQ_ADMIN_PORT');
  const host = flagOrEnv(flags, 'admin-host', env, 'MQ_ADMIN_HOST');
  const file = flagOrEnv(flags, 'admin-token-file', env, 'MQ_ADMIN_TOKEN_FILE');
  const token = env['MQ_ADMIN_TOKEN'];
  if (token !== undefined && token.length < ADMIN_TOKEN_CHARS_MIN) {
    throw new UsageError(`MQ_ADMIN_TOKEN must have at least ${ADMIN_TOKEN_CHARS_MIN} characters`);
  }
  return {
    adminHost: host === undefined ? ADMIN_HOST_DEFAULT : parseHost(host.value, host.source),
    adminPort: port === undefined ? ADMIN_PORT_DEFAULT : parsePort(port.value, port.source),
    adminTokenFile:
      token !== undefined ? null : (file?.value ?? join(dataDir, ADMIN_TOKEN_FILE_NAME)),
    adminToken: token ?? null,
  };
}

/**
 * The admin token: MQ_ADMIN_TOKEN, else the file's first line, else (file missing) a new random
 * token written to the file (mode 0600). Rejects when the file holds a token that is too short.
 */
export async function loadAdminToken(listen: AdminListen, logger?: Logger): Promise<string> {
  if (listen.adminToken !== null) return listen.adminToken;
  const file = listen.adminTokenFile!;
  try {
    const token = (await readFile(file, 'utf8')).split('\n')[0]!.trim();
    await warnIfLoose(file, logger);
    if (token.length < ADMIN_TOKEN_CHARS_MIN) {
      throw new Error(
        `${file}: the admin token must have at least ${ADMIN_TOKEN_CHARS_MIN} characters`,
      );
    }
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = randomBytes(24).toString('base64url');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}

/** Warns (once, at start) when other users may read the admin token file: it is the keys to all. */
async function warnIfLoose(file: string, logger: Logger | undefined): Promise<void> {
  const { mode } = await stat(file);
  if ((mode & 0o077) === 0) return;
  logger?.warn(
    { file, mode: `0${(mode & 0o777).toString(8)}` },
    `the admin token file ${file} is readable by other users; run: chmod 600 ${file}`,
  );
}

/**
 * The admin API's audit log: one line per change (info) and per refused token (warn), with the
 * client's address; `log: "audit"` tells them apart from the rest.
 */
export function adminAudit(logger: Logger | undefined): (record: AdminAuditRecord) => void {
  return (record) => {
    if (record.event === 'admin_login_failed') {
      logger?.warn({ log: 'audit', ...record }, `admin login refused from ${record.client}`);
    } else {
      logger?.info({ log: 'audit', ...record }, `admin change: ${record.method} ${record.path}`);
    }
  };
}
