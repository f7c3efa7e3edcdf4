// `mq admin`: the admin API (accounts, keys, plans, spools, the cluster's shape) from the command
// line. Talks HTTP to a member's (or `mq serve`'s) admin listener with the admin token; prints
// JSON. `accounts create` and `keys create` print the new key, the only time it is shown.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Command, CommandContext } from '../command.js';
import { UsageError } from '../usage-error.js';

export const ADMIN_URL_DEFAULT = 'http://127.0.0.1:8081';
export const ADMIN_TOKEN_FILE_DEFAULT = './data/admin-token';
/** Longest an admin call may take (a change waits up to 2 s for every gateway to hold it). */
const ADMIN_CALL_TIMEOUT_MS = 15_000;
/**
 * Longest a replica move or a member removal may take: the member waits up to 2 minutes per
 * round of moves (MOVE_WAIT_MS) before answering 503 (the moves go on; a re-run waits again).
 */
const ADMIN_MOVE_CALL_TIMEOUT_MS = 400_000;

const USAGE = `Usage: mq admin [--url URL] [--token-file FILE] COMMAND [ARGS...]

Manages accounts, keys, plans and spools through the admin API of a member or of \`mq serve\`.
Prints JSON. The token comes from MQ_ADMIN_TOKEN, else --token-file (MQ_ADMIN_TOKEN_FILE),
else ${ADMIN_TOKEN_FILE_DEFAULT} (where \`mq serve\` writes it).

Commands:
  accounts list
  accounts show ID
  accounts create ID [--plan PLAN] [--no-key] [-q]
                              new account with its default spool and a first key
  accounts suspend ID         402 account_suspended for its keys
  accounts block ID           403 account_blocked (abuse hold)
  accounts activate ID        back to active (unsuspend, unblock)
  accounts set-plan ID PLAN
  keys create ACCOUNT [-q]    a new key (shown once)
  keys block KEY_ID | keys unblock KEY_ID | keys revoke KEY_ID
  plans list
  plans set NAME [--queues N] [--retention-limit S] [--retention-default S] [--messages N]
            [--bytes N] [--message-bytes N] [--dedup-keys N] [--rate N] [--burst N]
  spools create ACCOUNT NAME | spools delete ACCOUNT NAME
  spools move ACCOUNT NAME MEMBER
                              move the spool's primary (Raft leadership transfer)
  cluster                     members, the metadata leader, every spool's replicas and primary
  members add ID HOST:PORT    add a member started with \`mq member --join\` (gRPC address)
  spools move-replica ACCOUNT NAME --from MEMBER --to MEMBER
                              move one replica of the spool to another member (it joins the
                              spool's group, catches up, becomes a voter; then --from leaves)
  members remove ID [--allow-shrink]
                              move every spool replica off the member, then remove it (409 when
                              no member is spare, unless --allow-shrink: replica sets shrink);
                              run it again to finish an interrupted removal

Options:
  --url URL           Admin API. Env MQ_ADMIN_URL. Default ${ADMIN_URL_DEFAULT}.
  --token-file FILE   Admin token file. Env MQ_ADMIN_TOKEN_FILE.
  -q, --quiet         With a create that makes a key: print only the key.
  -h, --help          Show this help.`;

const PLAN_FLAGS: Readonly<Record<string, string>> = {
  queues: 'queuesPerSpoolMax',
  'retention-limit': 'retentionLimitSeconds',
  'retention-default': 'retentionDefaultSeconds',
  messages: 'messagesPerSpoolMax',
  bytes: 'payloadBytesPerSpoolMax',
  'message-bytes': 'messageSizeMaxBytes',
  'dedup-keys': 'dedupKeysPerSpoolMax',
  rate: 'requestsPerSecond',
  burst: 'requestBurst',
};

interface Request {
  readonly method: string;
  readonly path: string;
  readonly body?: object;
}

export interface Parsed {
  readonly flags: Record<string, string | boolean | undefined>;
  readonly words: string[];
}

/** Splits `mq admin` arguments into flags and words. Throws UsageError for an unknown flag. */
export function parseAdminArgs(argv: readonly string[]): Parsed {
  const options: NonNullable<Parameters<typeof parseArgs>[0]>['options'] = {
    url: { type: 'string' },
    'token-file': { type: 'string' },
    plan: { type: 'string' },
    'no-key': { type: 'boolean' },
    from: { type: 'string' },
    to: { type: 'string' },
    'allow-shrink': { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const flag of Object.keys(PLAN_FLAGS)) options[flag] = { type: 'string' };
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: true,
    });
    return { flags: values as Parsed['flags'], words: positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function words(parsed: Parsed, count: number): string[] {
  if (parsed.words.length !== count) {
    throw new UsageError(`'${parsed.words.slice(0, 2).join(' ')}' takes ${count - 2} argument(s)`);
  }
  return parsed.words.slice(2).map((word) => encodeURIComponent(word));
}

/** Moves copy whole spools: their calls get longer than the others. */
function callTimeoutMs(req: Request): number {
  const moving =
    req.path.endsWith('/move-replica') ||
    (req.method === 'DELETE' && req.path.startsWith('/members/'));
  return moving ? ADMIN_MOVE_CALL_TIMEOUT_MS : ADMIN_CALL_TIMEOUT_MS;
}

function memberFlag(parsed: Parsed, flag: 'from' | 'to'): string {
  const value = parsed.flags[flag];
  if (typeof value !== 'string' || value === '') {
    throw new UsageError(`--${flag} MEMBER is required`);
  }
  return value;
}

function planBody(flags: Parsed['flags']): Record<string, number> {
  const body: Record<string, number> = {};
  for (const [flag, field] of Object.entries(PLAN_FLAGS)) {
    const value = flags[flag];
    if (typeof value !== 'string') continue;
    if (!/^\d{1,15}$/.test(value)) throw new UsageError(`--${flag} must be a non-negative integer`);
    body[field] = Number(value);
  }
  return body;
}

/** The HTTP request a command line means; throws UsageError for anything else. */
export function adminRequest(parsed: Parsed): Request {
  const [group, verb] = parsed.words;
  const key = `${group ?? ''} ${verb ?? ''}`.trim();
  switch (key) {
    case 'accounts list':
      words(parsed, 2);
      return { method: 'GET', path: '/accounts' };
    case 'accounts show':
      return { method: 'GET', path: `/accounts/${words(parsed, 3)[0]}` };
    case 'accounts create': {
      const [id] = words(parsed, 3);
      const plan = parsed.flags['plan'];
      const body = { id: decodeURIComponent(id!), ...(typeof plan === 'string' ? { plan } : {}) };
      return { method: 'POST', path: '/accounts', body };
    }
    case 'accounts suspend':
    case 'accounts block':
    case 'accounts activate': {
      const state = { suspend: 'suspended', block: 'blocked', activate: 'active' }[verb!]!;
      return { method: 'PATCH', path: `/accounts/${words(parsed, 3)[0]}`, body: { state } };
    }
    case 'accounts set-plan': {
      const [id, plan] = words(parsed, 4);
      const body = { plan: decodeURIComponent(plan!) };
      return { method: 'PATCH', path: `/accounts/${id}`, body };
    }
    case 'keys create':
      return { method: 'POST', path: `/accounts/${words(parsed, 3)[0]}/keys` };
    case 'keys block':
    case 'keys unblock':
      const body = { blocked: verb === 'block' };
      return { method: 'PATCH', path: `/keys/${words(parsed, 3)[0]}`, body };
    case 'keys revoke':
      return { method: 'DELETE', path: `/keys/${words(parsed, 3)[0]}` };
    case 'plans list':
      words(parsed, 2);
      return { method: 'GET', path: '/plans' };
    case 'plans set':
      return { method: 'PUT', path: `/plans/${words(parsed, 3)[0]}`, body: planBody(parsed.flags) };
    default:
      return clusterRequest(parsed, key);
  }
}

/** Spool, member and cluster commands: the part of adminRequest that moves data. */
function clusterRequest(parsed: Parsed, key: string): Request {
  switch (key) {
    case 'spools create': {
      const [account, spool] = words(parsed, 4);
      return { method: 'PUT', path: `/accounts/${account}/spools/${spool}` };
    }
    case 'spools delete': {
      const [account, spool] = words(parsed, 4);
      return { method: 'DELETE', path: `/accounts/${account}/spools/${spool}` };
    }
    case 'spools move': {
      const [account, spool, to] = words(parsed, 5);
      const body = { to: decodeURIComponent(to!) };
      return { method: 'POST', path: `/accounts/${account}/spools/${spool}/move`, body };
    }
    case 'cluster':
      words(parsed, 1);
      return { method: 'GET', path: '/cluster' };
    case 'members add': {
      const [id, address] = words(parsed, 4);
      const body = { id: decodeURIComponent(id!), address: decodeURIComponent(address!) };
      return { method: 'POST', path: '/members', body };
    }
    case 'members remove': {
      const [id] = words(parsed, 3);
      const shrink = parsed.flags['allow-shrink'] === true ? '?allowShrink=true' : '';
      return { method: 'DELETE', path: `/members/${id}${shrink}` };
    }
    case 'spools move-replica': {
      const [account, spool] = words(parsed, 4);
      const body = { from: memberFlag(parsed, 'from'), to: memberFlag(parsed, 'to') };
      return { method: 'POST', path: `/accounts/${account}/spools/${spool}/move-replica`, body };
    }
    default:
      throw new UsageError(`unknown admin command '${key}'`);
  }
}

async function adminToken(flags: Parsed['flags'], env: CommandContext['env']): Promise<string> {
  const token = env['MQ_ADMIN_TOKEN'];
  if (token !== undefined && token !== '') return token;
  const flag = flags['token-file'];
  const file =
    typeof flag === 'string' ? flag : (env['MQ_ADMIN_TOKEN_FILE'] ?? ADMIN_TOKEN_FILE_DEFAULT);
  try {
    return (await readFile(file, 'utf8')).split('\n')[0]!.trim();
  } catch (error) {
    throw new UsageError(
      `no admin token: set MQ_ADMIN_TOKEN or --token-file (${file}: ${(error as Error).message})`,
    );
  }
}

/** Calls the admin API at `url` with `token`; AdminUnreachable when no answer comes. */
function adminCaller(url: string, token: string) {
  return async (req: Request): Promise<{ status: number; body: unknown }> => {
    let response: Response;
    try {
      response = await fetch(`${url.replace(/\/$/, '')}/admin/v1${req.path}`, {
        method: req.method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        signal: AbortSignal.timeout(callTimeoutMs(req)),
      });
    } catch (error) {
      throw new AdminUnreachable(url, error);
    }
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  };
}

async function runAdmin(argv: readonly string[], context: CommandContext): Promise<number> {
  const parsed = parseAdminArgs(argv);
  if (parsed.flags['help'] === true || parsed.words.length === 0) {
    context.out(`${USAGE}\n`);
    return parsed.flags['help'] === true ? 0 : 2;
  }
  const request = adminRequest(parsed);
  const url = (typeof parsed.flags['url'] === 'string' ? parsed.flags['url'] : undefined) ??
    context.env['MQ_ADMIN_URL'] ?? ADMIN_URL_DEFAULT;
  const token = await adminToken(parsed.flags, context.env);
  if (!/^https?:\/\//.test(url)) {
    throw new UsageError(`the admin URL must start with http:// or https://, got '${url}'`);
  }
  const call = adminCaller(url, token);
  let answer: { status: number; body: unknown };
  try {
    answer = await call(request);
  } catch (error) {
    if (!(error instanceof AdminUnreachable)) throw error;
    (context.err ?? context.out)(`mq: ${error.message}\n`);
    return 1;
  }
  const message = (answer.body as { message?: string } | null)?.message;
  if (answer.status === 404 && message === 'no such path') {
    (context.err ?? context.out)(
      `mq: ${url} is not an admin API (it answers like the public API): the admin API listens ` +
        'on the member\'s --admin-port, 127.0.0.1:8081 by default\n',
    );
    return 1;
  }
  if (answer.status >= 300) {
    context.out(`${JSON.stringify(answer.body, null, 2)}\n`);
    return 1;
  }
  const [group, verb] = parsed.words;
  const makesKey =
    (group === 'keys' && verb === 'create') ||
    (group === 'accounts' && verb === 'create' && parsed.flags['no-key'] !== true);
  if (group === 'accounts' && verb === 'create' && makesKey) {
    const account = answer.body as { id: string };
    const keysPath = `/accounts/${encodeURIComponent(account.id)}/keys`;
    const key = await call({ method: 'POST', path: keysPath });
    if (key.status >= 300) {
      context.out(`${JSON.stringify(key.body, null, 2)}\n`);
      return 1;
    }
    answer = { status: 201, body: { account: answer.body, key: key.body } };
  }
  if (makesKey && parsed.flags['quiet'] === true) {
    // The key alone on stdout (for $(...)); its id, needed to block or revoke it, on stderr.
    const body = answer.body as { id?: string; key: string | { id: string; key: string } };
    const key = typeof body.key === 'string' ? body.key : body.key.key;
    const id = typeof body.key === 'string' ? body.id : body.key.id;
    context.out(`${key}\n`);
    if (id !== undefined) (context.err ?? (() => undefined))(`key id ${id}\n`);
    return 0;
  }
  if (answer.body !== null) context.out(`${JSON.stringify(answer.body, null, 2)}\n`);
  return 0;
}

/** The admin API could not be reached at all. */
class AdminUnreachable extends Error {
  constructor(url: string, cause: unknown) {
    const why = String((cause as { cause?: { code?: string } }).cause?.code ?? cause);
    super(`no admin API answered at ${url} (${why}): is the member or mq serve running, and is ` +
      'that its --admin-port?');
  }
}

export const adminCommand: Command = {
  name: 'admin',
  summary: 'manage accounts, keys, plans and spools through the admin API',
  usage: USAGE,
  run: runAdmin,
};
