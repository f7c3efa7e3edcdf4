// Certificates the cluster no longer trusts although its CA signed them: a decommissioned
// member's machine, a gateway whose key leaked. The CA's revocation list (a CRL `mq certs revoke`
// signs) names them by serial number. Every process checks the serial of each peer it accepts,
// at every call and again whenever the list changes (open streams of a revoked peer are cut),
// and of each member it dials.

/** A serial number as compared here: lower-case hex, no separators, no leading zeros. */
export function normalizeSerial(serial: string): string {
  const hex = serial.replace(/[:\s]/g, '').toLowerCase().replace(/^0+/, '');
  return hex === '' ? '0' : hex;
}

const HEX = /^[0-9a-f]+$/;

/** The revoked serial numbers a process enforces now; replaced whole when the CRL is reloaded. */
export class RevokedSerials {
  private serials: ReadonlySet<string> = new Set();
  private readonly listeners = new Set<() => void>();

  /** Whether the certificate with serial number `serial` (any hex spelling) is revoked. */
  has(serial: string | undefined): boolean {
    if (serial === undefined || this.serials.size === 0) return false;
    return this.serials.has(normalizeSerial(serial));
  }

  get size(): number {
    return this.serials.size;
  }

  /**
   * Makes `serials` the revoked set and tells the listeners when it changed; returns whether it
   * did. Throws RangeError for a serial that is not hex (nothing is replaced then).
   */
  replace(serials: Iterable<string>): boolean {
    const next = new Set<string>();
    for (const serial of serials) {
      const normal = normalizeSerial(serial);
      if (!HEX.test(normal)) throw new RangeError(`not a hex serial number: ${serial}`);
      next.add(normal);
    }
    const same = next.size === this.serials.size && [...next].every((s) => this.serials.has(s));
    if (same) return false;
    this.serials = next;
    for (const listener of this.listeners) listener();
    return true;
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
