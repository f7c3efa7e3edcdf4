import { describe, expect, it } from 'vitest';
import {
  DISK_RESERVE_BYTES_MIN_DEFAULT,
  DiskWatermark,
  STORAGE_FULL_RETRY_AFTER_SECONDS,
  clearBytesOf,
  reserveBytesOf,
} from '../../src/host/disk-watermark.js';

const GiB = 1024 ** 3;

describe('reserveBytesOf', () => {
  it('defaults to the larger of 1 GiB and 5% of the volume; a configured reserve wins', () => {
    expect(reserveBytesOf(10 * GiB, undefined)).toBe(DISK_RESERVE_BYTES_MIN_DEFAULT);
    expect(reserveBytesOf(100 * GiB, undefined)).toBe(5 * GiB);
    expect(reserveBytesOf(272 * 1024 ** 2, undefined)).toBe(GiB); // a small volume: always low
    expect(reserveBytesOf(100 * GiB, 1234)).toBe(1234);
    expect(reserveBytesOf(100 * GiB, 0)).toBe(0);
  });

  it('clears 10% above the reserve, at least one byte above', () => {
    expect(clearBytesOf(1000)).toBe(1100);
    expect(clearBytesOf(0)).toBe(1);
  });
});

describe('DiskWatermark', () => {
  it('raises below the reserve, holds in the margin, clears at reserve + 10%', () => {
    const mark = new DiskWatermark(1000);
    expect(mark.observe({ freeBytes: 5000, totalBytes: 10_000 })).toBeNull();
    expect(mark.refuseGrowth()).toBeNull();
    expect(mark.observe({ freeBytes: 1000, totalBytes: 10_000 })).toBeNull(); // at the reserve
    expect(mark.observe({ freeBytes: 999, totalBytes: 10_000 })).toBe('raised');
    expect(mark.alarmed).toBe(true);
    expect(mark.observe({ freeBytes: 500, totalBytes: 10_000 })).toBeNull();
    expect(mark.observe({ freeBytes: 1099, totalBytes: 10_000 })).toBeNull(); // in the margin
    expect(mark.alarmed).toBe(true);
    expect(mark.observe({ freeBytes: 1100, totalBytes: 10_000 })).toBe('cleared');
    expect(mark.alarmed).toBe(false);
    expect(mark.observe({ freeBytes: 1050, totalBytes: 10_000 })).toBeNull(); // no flapping
    expect(mark.status()).toMatchObject({ alarm: false, raisedTotal: 1, freeBytes: 1050 });
  });

  it('refuses growth with 507 storage_full, the wait and the sample, and counts it', () => {
    const mark = new DiskWatermark(1000);
    mark.observe({ freeBytes: 10, totalBytes: 10_000 });
    const refusal = mark.refuseGrowth();
    expect(refusal?.kind).toBe('storage_full');
    expect(refusal?.status).toBe(507);
    expect(refusal?.details).toEqual({
      retryAfterSeconds: STORAGE_FULL_RETRY_AFTER_SECONDS,
      freeBytes: 10,
      reserveBytes: 1000,
    });
    mark.refuseGrowth();
    expect(mark.status()).toMatchObject({ alarm: true, refusedTotal: 2, clearBytes: 1100 });
  });

  it('follows the volume with the default reserve', () => {
    const mark = new DiskWatermark();
    expect(mark.observe({ freeBytes: 2 * GiB, totalBytes: 100 * GiB })).toBe('raised');
    expect(mark.status().reserveBytes).toBe(5 * GiB);
    expect(mark.observe({ freeBytes: 6 * GiB, totalBytes: 100 * GiB })).toBe('cleared');
  });

  it('rejects a reserve that is not a non-negative integer', () => {
    expect(() => new DiskWatermark(-1)).toThrow(/reserveBytes/);
    expect(() => new DiskWatermark(1.5)).toThrow(/reserveBytes/);
  });
});
