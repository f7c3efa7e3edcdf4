// A command line the CLI cannot act on: unknown command or flag, bad value. main prints the
// message with the usage and exits 2, the conventional status for a usage error.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Exit status for a usage error. */
export const EXIT_USAGE = 2;
