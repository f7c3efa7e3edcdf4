// How scripts start an mq process: through the `mq` launcher (packages/cli/bin/mq), as users
// and the container image do, so the process gets the launcher's environment (bin/mq.env); node
// flags go in MQ_NODE_FLAGS, since the launcher runs node itself.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MQ_LAUNCHER = fileURLToPath(new URL('../packages/cli/bin/mq', import.meta.url));

/**
 * `env` for the launcher: MQ_NODE_FLAGS set to `nodeFlags` (none: unset, so a caller's value is
 * not kept), and the directory of the node running this script first on the PATH, so the
 * launcher's `node` is this one (a benchmark states the node it measures from its own process).
 * Throws for a flag holding a space: the launcher splits MQ_NODE_FLAGS on spaces.
 */
export function launcherEnv(env, nodeFlags = [], execPath = process.execPath) {
  const out = { ...env, PATH: [dirname(execPath), env.PATH].filter(Boolean).join(':') };
  const spaced = nodeFlags.find((flag) => /\s/.test(flag));
  if (spaced !== undefined) throw new Error(`launcherEnv: a node flag with a space: ${spaced}`);
  if (nodeFlags.length === 0) delete out.MQ_NODE_FLAGS;
  else out.MQ_NODE_FLAGS = nodeFlags.join(' ');
  return out;
}
