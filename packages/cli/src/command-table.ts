// Every subcommand, by name, with its one-line summary; its module is imported only when the
// command runs or its help is shown. The server commands pull in the member, Raft, LevelDB and
// gRPC (about 1 s of CPU to import), which `mq send` and the other data-plane commands never
// need. A new command is one file under commands/ and one line here (a test checks each
// summary against the command's own).

import type { Command } from './command.js';

export interface CommandEntry {
  readonly name: string;
  /** One line for the command list: the command's own `summary`. */
  readonly summary: string;
  load(): Promise<Command>;
}

type Load = () => Promise<Command>;

function entry(name: string, summary: string, load: Load): [string, CommandEntry] {
  return [name, { name, summary, load }];
}

export const COMMANDS: ReadonlyMap<string, CommandEntry> = new Map([
  entry('local', 'run the in-memory local variant (any API key accepted)', async () =>
    (await import('./commands/local.js')).localCommand),
  entry('serve', 'run one durable member with the gateway inside (data in ./data)', async () =>
    (await import('./commands/serve.js')).serveCommand),
  entry(
    'member',
    'run one member of a cluster (Raft, member RPC, and the API on its HTTP port)',
    async () => (await import('./commands/member.js')).memberCommand,
  ),
  entry('gateway', 'run a stateless gateway in front of the members', async () =>
    (await import('./commands/gateway.js')).gatewayCommand),
  entry('admin', 'manage accounts, keys, plans and spools through the admin API', async () =>
    (await import('./commands/admin.js')).adminCommand),
  entry(
    'certs',
    "make the cluster's CA and member and gateway certificates (mutual TLS)",
    async () => (await import('./commands/certs.js')).certsCommand,
  ),
  entry('queues', 'list, create, describe, update or delete queues', async () =>
    (await import('./commands/queues.js')).queuesCommand),
  entry('send', 'send a message to a queue (argument, file or stdin)', async () =>
    (await import('./commands/send.js')).sendCommand),
  entry('recv', 'receive one message from a queue, print it, optionally ack it', async () =>
    (await import('./commands/recv.js')).recvCommand),
  entry(
    'stats',
    "print the spool's and each queue's depth and counters (--watch refreshes)",
    async () => (await import('./commands/stats.js')).statsCommand,
  ),
  entry('peek', 'print the message a handle names without moving it', async () =>
    (await import('./commands/failed.js')).peekCommand),
  entry('redrive', "move a queue's failed messages back to visible (all or --count N)", async () =>
    (await import('./commands/failed.js')).redriveCommand),
  entry('discard', "delete a queue's failed messages, or one message by its handle", async () =>
    (await import('./commands/failed.js')).discardCommand),
]);
