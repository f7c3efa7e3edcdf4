/** Types of scripts/mq-launcher.mjs, for its test. */
export declare const MQ_LAUNCHER: string;
export declare function launcherEnv(
  env: Readonly<Record<string, string | undefined>>,
  nodeFlags?: readonly string[],
  execPath?: string,
): Record<string, string | undefined>;
