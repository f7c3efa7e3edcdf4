// How scripts start an mq process: through the `mq` launcher (packages/cli/bin/mq), as users
// and the container image do, so the process gets the launcher's environment (bin/mq.env); node
// flags go in MQ_NODE_FLAGS, since the launcher runs node itself.
import { fileURLToPath } from 'node:url';

export const MQ_LAUNCHER = fileURLToPath(new URL('../packages/cli/bin/mq', import.meta.url));

/** `env` with MQ_NODE_FLAGS set to `nodeFlags` (none: unset, so a caller's value is not kept). */
export function launcherEnv(env, nodeFlags = []) {
  const out = { ...env };
  if (nodeFlags.length === 0) delete out.MQ_NODE_FLAGS;
  else out.MQ_NODE_FLAGS = nodeFlags.join(' ');
  return out;
}
