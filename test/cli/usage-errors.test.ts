import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/test-driver.js';
import { prepareCliDir, runCli } from './cli-process.js';

describe('agentbus usage errors', () => {
  it('answers an unknown command with one line, the help hint and exit 2', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const run = await runCli(dir, ['frobnicate']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/agentbus --help/);
    expect(run.stdout).toBe('');
  });

  it('answers an unknown flag of a command with one line naming that command\'s help, exit 2', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    for (const args of [['status', '--bogus'], ['backup', '--yes'], ['reset', '--fix']]) {
      const run = await runCli(dir, args);
      expect(run.code).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`agentbus ${args[0]} --help`);
    }
  });

  it('refuses a convert without a valid --to with exit 2', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    for (const args of [['convert'], ['convert', '--to', 'sideways']]) {
      const run = await runCli(dir, args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--to/);
    }
  });

  it('prints help with examples and the exit codes for every admin command', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    for (const command of ['status', 'reset', 'doctor', 'backup', 'convert', 'identity', 'mcp']) {
      const run = await runCli(dir, [command, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Examples');
      expect(run.stdout).toContain('Exit codes: 0 done, 1 failed, 2 usage error, 3 refused');
    }
  });
});
