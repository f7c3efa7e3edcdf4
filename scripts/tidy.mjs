#!/usr/bin/env node
// Tidy: the mechanical rules of docs' style guide (/shared/design/style.md), checked on every
// `npm test` so they hold without a reviewer counting columns. TigerBeetle's tidy.zig is the
// model: a short list of rules a parser can judge, each violation printed as file:line and rule,
// and a non-zero exit. Rules, over the production sources (every .ts under packages/NAME/src):
//   - line-length:     a line is at most LINE_COLUMNS_MAX characters;
//   - function-length: a function (declaration, method, accessor, constructor, arrow or function
//                      expression) spans at most FUNCTION_LINES_MAX lines, signature to closing
//                      brace; a nested function counts inside its parent as well (not in
//                      SUITE_ROOTS, test suites shipped as source);
//   - banned-call:     no clock, timer or random source in the pure cores and the cluster layer
//                      (PURE_ROOTS), and no clock or timer in the gateway (CLOCK_ROOTS), outside
//                      CLOCK_FILES: time and randomness come in through the injected Clock and
//                      random source, so a simulation or a test's manual clock can drive them.
// Run: `node scripts/tidy.mjs` (the whole tree), `node scripts/tidy.mjs FILE...` (those files), or
// `node scripts/tidy.mjs --as PATH FILE` (FILE judged as if it stood at PATH: the test's fixtures).

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const LINE_COLUMNS_MAX = 100;
export const FUNCTION_LINES_MAX = 70;

/** Directories (repository-relative, '/'-separated) where no clock, timer or random call runs. */
export const PURE_ROOTS = [
  'packages/engine/src/',
  'packages/raft/src/core/',
  'packages/member/src/cluster/',
  'packages/member/src/rpc/',
];

/**
 * Directories where no clock or timer runs, though the system's random source may (the gateway's
 * one use names its request ids, which no simulation replays).
 */
export const CLOCK_ROOTS = ['packages/gateway/src/'];

/**
 * Directories of test suites that ship as source (the conformance suite runs against every mode):
 * like test/ files, a `describe` body there is a script of cases, not a function to split, so
 * function-length does not apply. Lines are still checked.
 */
export const SUITE_ROOTS = ['packages/testkit/src/conformance/'];

/**
 * Files under PURE_ROOTS or CLOCK_ROOTS allowed a real clock or timer, each with the reason.
 * Empty: the Clock itself (packages/protocol/src/clock.ts) lives outside the roots, and so does
 * the system random source (packages/member/src/host/random.ts).
 */
export const CLOCK_FILES = new Map([]);

const TIMER_NAMES = new Set(['setTimeout', 'setInterval', 'setImmediate']);
const CRYPTO_MODULES = new Set(['crypto', 'node:crypto']);
const TIMER_MODULES = new Set(['timers', 'node:timers', 'timers/promises', 'node:timers/promises']);

/** True for names that draw from the system's random source. */
function isRandomName(name) {
  return name.startsWith('random') || name === 'getRandomValues';
}

/**
 * The violations in one file. `path` is repository-relative with '/' separators: it decides
 * whether the banned-call rule applies. Returns `{ path, line, rule, message }` records, line
 * 1-based, in source order.
 */
export function tidyFile(path, text) {
  const violations = [];
  const report = (line, rule, message) => violations.push({ path, line, rule, message });
  checkLines(text, report);
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, scriptKindOf(path));
  const exempt = CLOCK_FILES.has(path);
  const pure = PURE_ROOTS.some((root) => path.startsWith(root)) && !exempt;
  const timed = pure || (CLOCK_ROOTS.some((root) => path.startsWith(root)) && !exempt);
  const suite = SUITE_ROOTS.some((root) => path.startsWith(root));
  const lineOf = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node) => {
    if (!suite) checkFunction(node, source, lineOf, report);
    if (timed) checkBanned(node, lineOf, report, pure);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return violations.sort((a, b) => a.line - b.line);
}

function scriptKindOf(path) {
  if (path.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (path.endsWith('.mjs') || path.endsWith('.js')) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function checkLines(text, report) {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    // Code points, not UTF-16 units: a '—' or 'µ' is one column on screen.
    const columns = [...lines[i].replace(/\r$/, '')].length;
    if (columns > LINE_COLUMNS_MAX) {
      report(i + 1, 'line-length', `${columns} columns (max ${LINE_COLUMNS_MAX})`);
    }
  }
}

function checkFunction(node, source, lineOf, report) {
  if (!ts.isFunctionLike(node) || node.body === undefined) return;
  const first = lineOf(node);
  const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
  const lines = last - first + 1;
  if (lines > FUNCTION_LINES_MAX) {
    report(first, 'function-length', `${nameOf(node)}: ${lines} lines (max ${FUNCTION_LINES_MAX})`);
  }
}

function nameOf(node) {
  if (node.name !== undefined) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent !== undefined && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous function)';
}

/** Reports a clock or timer at `node`, and with `randomToo` a random source. */
function checkBanned(node, lineOf, report, randomToo) {
  const found = bannedUse(node, randomToo);
  if (found !== null) report(lineOf(node), 'banned-call', found);
}

/** What `node` uses that the roots must not, or null. */
function bannedUse(node, randomToo) {
  if (ts.isPropertyAccessExpression(node)) return bannedProperty(node, randomToo);
  if (ts.isNewExpression(node)) {
    const noArguments = node.arguments === undefined || node.arguments.length === 0;
    const isDate = ts.isIdentifier(node.expression) && node.expression.text === 'Date';
    return isDate && noArguments ? 'new Date() reads the clock: take the time from Clock' : null;
  }
  if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
    const name = node.expression.text;
    if (TIMER_NAMES.has(name)) return `${name} is a real timer: use Clock.setTimer`;
  }
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
    return bannedImport(node, randomToo);
  }
  return null;
}

function bannedProperty(node, randomToo) {
  const object = node.expression.getText();
  const name = node.name.text;
  if (object === 'Date' && name === 'now') return 'Date.now reads the clock: use Clock.nowMs';
  if (object === 'performance' && name === 'now') {
    return 'performance.now reads the clock: use Clock.nowMs';
  }
  if (TIMER_NAMES.has(name)) return `${object}.${name} is a real timer: use Clock.setTimer`;
  if (!randomToo) return null;
  if (object === 'Math' && name === 'random') return 'Math.random: inject a random source';
  if (object === 'crypto' && isRandomName(name)) return `crypto.${name}: inject a random source`;
  return null;
}

function bannedImport(node, randomToo) {
  const module = node.moduleSpecifier.text;
  if (TIMER_MODULES.has(module)) return `import from '${module}': use Clock.setTimer`;
  if (!randomToo || !CRYPTO_MODULES.has(module)) return null;
  const bindings = node.importClause?.namedBindings;
  if (bindings === undefined) return null;
  if (ts.isNamespaceImport(bindings)) return null; // its `crypto.random*` uses are caught instead
  for (const element of bindings.elements) {
    const imported = (element.propertyName ?? element.name).text;
    if (isRandomName(imported)) return `${imported} from '${module}': inject a random source`;
  }
  return null;
}

/** Repository-relative paths of the production sources: every .ts under packages/NAME/src. */
export function sourceFiles(root) {
  const files = [];
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    let entries;
    try {
      entries = readdirSync(src, { recursive: true });
    } catch {
      continue; // a package without src/
    }
    for (const entry of entries) {
      const name = String(entry);
      if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(join(src, name));
    }
  }
  return files.map((file) => relative(root, file).split(sep).join('/')).sort();
}

/**
 * Checks `files` under `root`: each `{ file, as }` reads `file` and judges it as if it stood at the
 * repository-relative path `as`. Prints each violation; returns the exit status: 1 if any file
 * has one, else 0.
 */
export function runTidy(root, files, log = console.log) {
  let failures = 0;
  for (const { file, as } of files) {
    const violations = tidyFile(as, readFileSync(resolve(root, file), 'utf8'));
    for (const v of violations) log(`${v.path}:${v.line}: ${v.rule}: ${v.message}`);
    failures += violations.length;
  }
  log(`tidy: ${files.length} files, ${failures} violations`);
  return failures === 0 ? 0 : 1;
}

/** The `{ file, as }` list that command-line `args` name (see the header). */
function filesOfArgs(root, args) {
  const relativeOf = (file) => relative(root, resolve(file)).split(sep).join('/');
  if (args.length === 0) return sourceFiles(root).map((path) => ({ file: path, as: path }));
  if (args[0] === '--as') {
    if (args.length !== 3) throw new Error('tidy: usage: --as PATH FILE');
    return [{ file: resolve(args[2]), as: args[1] }];
  }
  return args.map((file) => ({ file: resolve(file), as: relativeOf(file) }));
}

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = runTidy(root, filesOfArgs(root, process.argv.slice(2)));
}
