// Every subcommand, by name. A new command is one file under commands/ and one line here.

import type { Command } from './command.js';
import { adminCommand } from './commands/admin.js';
import { certsCommand } from './commands/certs.js';
import { discardCommand, peekCommand, redriveCommand } from './commands/failed.js';
import { queuesCommand } from './commands/queues.js';
import { recvCommand } from './commands/recv.js';
import { sendCommand } from './commands/send.js';
import { statsCommand } from './commands/stats.js';
import { gatewayCommand } from './commands/gateway.js';
import { localCommand } from './commands/local.js';
import { memberCommand } from './commands/member.js';
import { serveCommand } from './commands/serve.js';

export const COMMANDS: ReadonlyMap<string, Command> = new Map([
  [localCommand.name, localCommand],
  [serveCommand.name, serveCommand],
  [memberCommand.name, memberCommand],
  [gatewayCommand.name, gatewayCommand],
  [adminCommand.name, adminCommand],
  [certsCommand.name, certsCommand],
  [queuesCommand.name, queuesCommand],
  [sendCommand.name, sendCommand],
  [recvCommand.name, recvCommand],
  [statsCommand.name, statsCommand],
  [peekCommand.name, peekCommand],
  [redriveCommand.name, redriveCommand],
  [discardCommand.name, discardCommand],
]);
