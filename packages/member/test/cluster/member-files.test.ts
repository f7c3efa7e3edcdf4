// A member's data directory holds payloads, key hashes and the cluster secret: whatever the
// process's umask, it is made (or tightened) to this user alone.
import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Member } from '../../src/cluster/member.js';
import { FAST_RAFT } from './helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('a member data directory', () => {
  it('is 0700 when created, and tightened when it existed looser', async () => {
    const root = await mkdtemp(join(tmpdir(), 'mq-member-files-'));
    dirs.push(root);
    const fresh = join(root, 'fresh');
    const loose = join(root, 'loose');
    await mkdir(loose, { mode: 0o755 });
    for (const dataDir of [fresh, loose]) {
      const member = await Member.start({
        id: 'n1',
        peers: { n1: '127.0.0.1:0' },
        listen: '127.0.0.1:0',
        dataDir,
        raft: FAST_RAFT,
        security: INSECURE_CLUSTER,
      });
      await member.close();
      expect((await stat(dataDir)).mode & 0o777, dataDir).toBe(0o700);
    }
  });
});
