import { describe, expect, it } from 'vitest';
import { COMMANDS, EXIT_USAGE, cliVersion, runCli } from '../src/index.js';
import { captureIo } from './io.js';

describe('runCli', () => {
  it('lists each command with its own name and summary, loading it only to run it', async () => {
    for (const [name, entry] of COMMANDS) {
      const command = await entry.load();
      expect([command.name, command.summary]).toEqual([name, entry.summary]);
    }
  });

  it('prints the version', async () => {
    const c = captureIo();
    expect(await runCli(['--version'], c.io)).toBe(0);
    expect(c.out()).toBe(`${cliVersion()}\n`);
    expect(cliVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('prints general and per-command help', async () => {
    const general = captureIo();
    expect(await runCli(['help'], general.io)).toBe(0);
    expect(general.out()).toContain('local');
    const local = captureIo();
    expect(await runCli(['help', 'local'], local.io)).toBe(0);
    expect(local.out()).toContain('Usage: mq local');
    const flag = captureIo();
    expect(await runCli(['local', '--help'], flag.io)).toBe(0);
    expect(flag.out()).toContain('MQ_PORT');
  });

  it('exits 2 with usage for unknown commands and flags', async () => {
    const none = captureIo();
    expect(await runCli([], none.io)).toBe(EXIT_USAGE);
    expect(none.err()).toContain('Usage: mq');
    const unknown = captureIo();
    expect(await runCli(['frobnicate'], unknown.io)).toBe(EXIT_USAGE);
    expect(unknown.err()).toContain("unknown command 'frobnicate'");
    const badFlag = captureIo();
    expect(await runCli(['local', '--bogus'], badFlag.io)).toBe(EXIT_USAGE);
    expect(badFlag.err()).toContain('Usage: mq local');
    const badEnv = captureIo({ MQ_PORT: 'eighty' });
    expect(await runCli(['local'], badEnv.io)).toBe(EXIT_USAGE);
    expect(badEnv.err()).toContain('MQ_PORT');
    const badHelp = captureIo();
    expect(await runCli(['help', 'nothing'], badHelp.io)).toBe(EXIT_USAGE);
  });
});
