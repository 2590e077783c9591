/**
 * Process identities for tests of owner liveness: one of a real process that
 * has exited, and ones from a realm no process here shares.
 */
import { parseProcessIdentity, type ProcessIdentity } from '../../src/db/processes/process-identity.js';
import { runFixture } from './child-process.js';

/**
 * The identity of a real process that has exited and been reaped, so
 * judgeProcess finds it certainly dead (pid gone, or reused with another
 * start time).
 */
export async function deadProcess(): Promise<ProcessIdentity> {
  const result = await runFixture('print-identity.js', []);
  const identity = result.code === 0 ? parseProcessIdentity(result.stdout) : undefined;
  if (identity === undefined) throw new Error(`print-identity.js failed (exit ${result.code}): ${result.stderr}`);
  return identity;
}

let foreignPids = 0;

/** An identity from a realm no process here shares (as a container's process is), so it is never judged alive or dead by pid. */
export function foreignProcess(): ProcessIdentity {
  return { pid: 4_000_000 + ++foreignPids, startTime: 1, realm: { boot: 'otherhost', pidNamespace: 1 } };
}
