// Every subcommand, by name. A new command is one file under commands/ and one line here.

import type { Command } from './command.js';
import { localCommand } from './commands/local.js';

export const COMMANDS: ReadonlyMap<string, Command> = new Map([[localCommand.name, localCommand]]);
