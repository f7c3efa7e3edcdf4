// One line of the operator log (operator-log.ts): what the member's status changes mean for
// whoever runs it. Its own file so the pieces that derive events (memory-options.ts) and the log
// that writes them share it without a circle.

export interface OperatorEvent {
  readonly level: 'info' | 'warn' | 'error';
  /** Fields to act on; `event` names the kind. */
  readonly fields: Readonly<Record<string, string | number | boolean | null | readonly string[]>>;
  readonly message: string;
}
