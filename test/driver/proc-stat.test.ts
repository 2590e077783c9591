/**
 * readProcStat, the one reader of /proc/<pid>/stat (process identities,
 * owner liveness and the harness ancestry walk use it), on real processes.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentProcess, readProcStat } from '../../src/db/processes/process-identity.js';
import { tempDir } from '../support/test-driver.js';

// /proc/<pid>/stat is Linux's; elsewhere process identities carry no start time.
describe.skipIf(process.platform !== 'linux')('readProcStat', () => {
  it("reads this process's command, state, parent and start time", () => {
    const stat = readProcStat(process.pid);
    if (stat === undefined || stat === 'gone') throw new Error(`/proc/${process.pid}/stat of this very process read as ${String(stat)}`);
    expect(stat.command).toBe(readFileSync('/proc/self/comm', 'latin1').trim());
    expect(stat.parent).toBe(process.ppid);
    expect(stat.startTime).toBe(currentProcess().startTime);
    expect(stat.state).toMatch(/^[A-Za-z]$/);
  });

  it('reads the fields after a command name holding spaces and parentheses', async () => {
    // The command name is the executable's file name: Node started through a link named like this.
    const name = 'a) (b c)';
    const link = join(tempDir(), name);
    symlinkSync(process.execPath, link);
    const child = spawn(link, ['-e', 'process.stdout.write("up"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(child.stdout, 'data');
      const pid = child.pid;
      if (pid === undefined) throw new Error('the child has no pid');
      const stat = readProcStat(pid);
      if (stat === undefined || stat === 'gone') throw new Error(`/proc/${pid}/stat of a running child read as ${String(stat)}`);
      expect(stat.command).toBe(name);
      expect(stat.parent).toBe(process.pid);
      expect(stat.startTime).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("says 'gone' for a pid no process can have (above pid_max)", () => {
    const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1').trim());
    expect(readProcStat(pidMax + 1)).toBe('gone');
  });
});
