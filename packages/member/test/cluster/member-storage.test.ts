// A member's storage: LevelDB opened in a data directory made this user's alone, a group's log
// and payloads dropped, counters, and closed only when opened here (an engine passed in is the
// caller's to close).

import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStorageEngine } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { MemberStorage } from '../../src/cluster/member-storage.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('MemberStorage', () => {
  it('opens LevelDB in a private data directory, drops a group, and closes it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'mq-member-storage-'));
    dirs.push(root);
    const dataDir = join(root, 'data');
    const storage = await MemberStorage.open({ id: 'n1', peers: { n1: 'h:1' }, dataDir }, null);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    expect(storage.canReopen).toBe(true);
    const group = storage.engine.group('spool:a#1');
    await group.load(); // a group is loaded before it is written
    await group.save({ term: 1, vote: null, commit: 0 }, []);
    expect(await storage.engine.groups()).toContain('spool:a#1');
    await storage.drop('spool:a#1');
    expect(await storage.engine.groups()).not.toContain('spool:a#1');
    expect(storage.stats()).not.toBeNull();
    await storage.close();
  });

  it('leaves an engine passed in the options open', async () => {
    const engine = new MemoryStorageEngine();
    const options = { id: 'n1', peers: { n1: 'h:1' }, storage: engine };
    const storage = await MemberStorage.open(options, null);
    await storage.close();
    const group = engine.group('meta');
    await group.load();
    await group.save({ term: 1, vote: null, commit: 0 }, []);
    expect(await engine.groups()).toEqual(['meta']);
  });
});
