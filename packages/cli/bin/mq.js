#!/usr/bin/env node
// The `mq` command's launcher. It is a committed file, not a build output, so that `npm ci` in
// the repository links `mq` onto node_modules/.bin (npm links a bin only if its target exists
// at install time, before the root `prepare` script builds dist/). It runs the compiled entry
// point, or says in one sentence what is missing when nothing was built yet.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write(
    'mq: the command is not built yet: run `npm run build` in the repository (npm ci does it)\n',
  );
  process.exit(1);
}
await import(entry.href);
