// Where the repository and the built `mq` command are, from this file's location (the same from
// src/cluster/ under vitest and from dist/cluster/ when built).

import { fileURLToPath } from 'node:url';

/** Repository root, with a trailing slash. */
export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The built CLI entry point the harness runs as `node <CLI_MAIN> <command> ...`. */
export const CLI_MAIN = `${REPO_ROOT}packages/cli/dist/main.js`;
/** The TypeScript compiler of the workspace. */
export const TSC_BIN = `${REPO_ROOT}node_modules/typescript/bin/tsc`;
