/** Types of scripts/tidy.mjs, for its test (see the script's header for the rules). */
export interface Violation {
  readonly path: string;
  readonly line: number;
  readonly rule: 'line-length' | 'function-length' | 'banned-call';
  readonly message: string;
}
export declare const LINE_COLUMNS_MAX: number;
export declare const FUNCTION_LINES_MAX: number;
export declare const PURE_ROOTS: readonly string[];
export declare const SUITE_ROOTS: readonly string[];
export declare const CLOCK_FILES: ReadonlyMap<string, string>;
export declare const PENDING_FILES: ReadonlyMap<string, string>;
export declare function tidyFile(path: string, text: string): Violation[];
export declare function sourceFiles(root: string): string[];
export declare function runTidy(
  root: string,
  files: readonly { file: string; as: string }[],
  log?: (line: string) => void,
): 0 | 1;
