import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAdminToken } from '../src/admin-options.js';
import { captureIo } from './io.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mq-admin-options-'));
  dirs.push(dir);
  return dir;
}

const listen = (file: string) => ({ adminHost: '127.0.0.1', adminPort: 0, adminToken: null, adminTokenFile: file });

describe('loadAdminToken', () => {
  it('makes a missing token file readable by this user alone, in a private directory', async () => {
    const dir = join(await tempDir(), 'data');
    const token = await loadAdminToken(listen(join(dir, 'admin-token')));
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect((await stat(join(dir, 'admin-token'))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('warns, naming the chmod, when others may read the token file; is quiet when they may not', async () => {
    const file = join(await tempDir(), 'admin-token');
    await writeFile(file, `${'t'.repeat(24)}\n`);
    await chmod(file, 0o644);
    const loose = captureIo();
    expect(await loadAdminToken(listen(file), loose.io.logger)).toBe('t'.repeat(24));
    const warning = loose.logs.find((record) => record['level'] === 40);
    expect(warning?.['msg']).toBe(`the admin token file ${file} is readable by other users; run: chmod 600 ${file}`);
    expect(JSON.stringify(loose.logs)).not.toContain('t'.repeat(24));
    await chmod(file, 0o600);
    const tight = captureIo();
    await loadAdminToken(listen(file), tight.io.logger);
    expect(tight.logs).toEqual([]);
  });
});
