import { join } from 'node:path';
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

  it('answers no command, or a flag where the command belongs, with one line and exit 2', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    for (const args of [[], ['-x'], ['--json', 'status']]) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
      expect(run.stderr).toMatch(/^agentbus: .*agentbus --help/);
      expect(run.stdout).toBe('');
    }
    expect((await runCli(dir, [])).stderr).toContain('no command given');
    expect((await runCli(dir, ['-x'])).stderr).toContain('unknown option -x');
  });

  it('suggests the command a typo was close to, and the flag', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const command = await runCli(dir, ['statsu']);
    expect(command.code).toBe(2);
    expect(command.stderr.trim()).toBe('agentbus: unknown command "statsu" (did you mean "status"?); run `agentbus --help` for the commands');
    const far = await runCli(dir, ['frobnicate']);
    expect(far.stderr).not.toContain('did you mean');
    const flag = await runCli(dir, ['doctor', '--jsno']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('did you mean --json?');
  });

  it('refuses positional arguments a command does not take, naming the first, with exit 2', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    for (const [args, word] of [[['status', 'extra-arg'], 'extra-arg'], [['mcp', 'now'], 'now'], [['backup', 'a.db', 'b.db'], 'b.db'], [['identity', 'Sam'], 'Sam']] as const) {
      const run = await runCli(dir, args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(`unexpected argument "${word}"`);
      expect(run.stderr).toContain(`agentbus ${args[0]} --help`);
    }
  });

  it('refuses a value flag given without its value, or twice, naming what it takes', async () => {
    const dir = tempDir();
    prepareCliDir(dir);
    const bareTo = await runCli(dir, ['convert', '--to']);
    expect(bareTo.code).toBe(2);
    expect(bareTo.stderr.trim()).toBe('agentbus: --to needs a value: portable, posix or postgres, e.g. --to portable');
    const toThenFlag = await runCli(dir, ['convert', '--to', '--config', join(dir, 'config.json')]);
    expect(toThenFlag.code).toBe(2);
    expect(toThenFlag.stderr).toContain('--to needs a value');
    for (const command of ['status', 'doctor', 'mcp', 'identity', 'reset', 'backup']) {
      const run = await runCli(dir, [command, '--config']);
      expect(run.code, command).toBe(2);
      expect(run.stderr).toContain('--config needs a value: a path');
    }
    const twice = await runCli(dir, ['status', '--config', 'a.json', '--config', 'b.json']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--config was given 2 times');
  });

  it('takes --config on every command, identity too (which reads no config)', async () => {
    const dir = tempDir();
    const config = prepareCliDir(dir);
    const identity = await runCli(dir, ['identity', '--config', config]);
    expect(identity.code, identity.stderr).toBe(0);
    expect(identity.stdout).toMatch(/^Agentbus: call register with name /);
    const status = await runCli(dir, ['status', '--json', '--config', config]);
    expect(status.code, status.stderr).toBe(0);
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
