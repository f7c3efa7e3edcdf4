import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packages = ['engine', 'raft', 'protocol', 'client', 'gateway', 'member', 'testkit', 'cli'];

export default defineConfig({
  resolve: {
    alias: Object.fromEntries(
      packages.map((name) => [
        `@spoolmq/${name}`,
        fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url)),
      ]),
    ),
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'scripts/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // expect.poll waits for something real processes or a browser do: on a loaded 2-core CI
    // machine that takes longer than vitest's 1 s default, never longer than this.
    expect: { poll: { timeout: 15_000 } },
  },
});
