/**
 * The portable lock protocol across pid namespaces (containers, sandboxes):
 * a pid means nothing outside its namespace, so owners there are judged by
 * their leases. Real processes made with `unshare --pid --fork --mount-proc`
 * and `nsenter`, on one real database file, checked by the stress harness.
 * Before leases, each of these runs lost updates or corrupted the file.
 */
import { describe, expect, it } from 'vitest';
import { LEASE_EXPIRY_MS } from '../../src/db/lock-records/owner-lease.js';
import { firstChild, ownNamespacePrefix, pidNamespacesUnavailable, PidNamespace } from '../support/pid-namespace.js';
import { createDatabase, driver, loggedSeqs, nativeView, readerChecks, startChild, verify, waitAll, type Child } from './stress-harness.js';

/** How long each writer and reader runs, counted from its own open (start-up under load is not part of it). */
const RUN_MS = 12_000;
/** Start-up allowed before a child counts as hung. */
const START_MS = 30_000;
const unavailable = pidNamespacesUnavailable();

async function waitForOutput(c: Child, line: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!c.stdout.split('\n').includes(line)) {
    if (c.proc.exitCode !== null) throw new Error(`${c.name} exited before printing ${line}: ${c.stderr}`);
    if (Date.now() > deadline) throw new Error(`${c.name} did not print ${line} within ${timeoutMs} ms: ${c.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function lastJson(c: Child): Record<string, unknown> {
  const lines = c.stdout.trim().split('\n');
  return JSON.parse(lines.at(-1) ?? '{}') as Record<string, unknown>;
}

describe.skipIf(unavailable !== undefined)(`wasm driver: processes in other pid namespaces${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`, () => {
  it('writers and readers in another pid namespace and outside it on one database: no lost update, integrity ok', async () => {
    const d = await driver();
    const { dir, dbPath } = createDatabase(d);
    const ns = await PidNamespace.start();
    try {
      const run = `+${RUN_MS}` as const;
      const children = [
        startChild('writer', 'out0', dbPath, dir, run),
        startChild('writer', 'out1', dbPath, dir, run),
        startChild('reader', 'rout', dbPath, dir, run),
        startChild('writer', 'in0', dbPath, dir, run, ns.prefix()),
        startChild('writer', 'in1', dbPath, dir, run, ns.prefix()),
        startChild('reader', 'rin', dbPath, dir, run, ns.prefix()),
      ];
      await waitAll(children, Date.now() + START_MS + RUN_MS);
      const writers = children.filter((c) => c.mode === 'writer');
      const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
      const { logged, counter } = verify(db, writers);
      db.close();
      expect(counter, 'no process was killed: the counter equals the increments logged').toBe(logged);
      for (const w of writers) expect(loggedSeqs(w).length, `${w.name} made progress: ${w.stdout}`).toBeGreaterThan(0);
      const checks = children.filter((c) => c.mode === 'reader').reduce((n, r) => n + readerChecks(r), 0);
      expect(checks).toBeGreaterThan(0);
      const native = nativeView(dbPath);
      if (native !== undefined) expect(native).toEqual({ counter, rows: counter, integrity: 'ok' });
      console.log(`one other namespace: ${logged} increments (${writers.map((w) => `${w.name} ${loggedSeqs(w).length}`).join(', ')}), ${checks} snapshot checks, none lost, integrity ok`);
    } finally {
      ns.kill();
    }
  }, 120_000);

  it('each inside writer in a pid namespace of its own (every one is pid 1 there): no lost update, integrity ok', async () => {
    const d = await driver();
    const { dir, dbPath } = createDatabase(d);
    const run = `+${RUN_MS}` as const;
    const children = [
      startChild('writer', 'out0', dbPath, dir, run),
      startChild('writer', 'out1', dbPath, dir, run),
      startChild('writer', 'own0', dbPath, dir, run, ownNamespacePrefix()),
      startChild('writer', 'own1', dbPath, dir, run, ownNamespacePrefix()),
      startChild('writer', 'own2', dbPath, dir, run, ownNamespacePrefix()),
    ];
    await waitAll(children, Date.now() + START_MS + RUN_MS);
    const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
    const { logged, counter } = verify(db, children);
    db.close();
    expect(counter).toBe(logged);
    for (const w of children) expect(loggedSeqs(w).length, `${w.name} made progress: ${w.stdout}`).toBeGreaterThan(0);
    const native = nativeView(dbPath);
    if (native !== undefined) expect(native).toEqual({ counter, rows: counter, integrity: 'ok' });
    console.log(`own namespaces: ${logged} increments (${children.map((w) => `${w.name} ${loggedSeqs(w).length}`).join(', ')}), none lost, integrity ok`);
  }, 120_000);

  it('an owner in another pid namespace that crashed, or is stopped, holding the write lock: writers outside wait out its lease, then go on; the stopped one fails its commit on waking; nothing lost', async () => {
    const d = await driver();
    const stopped = createDatabase(d);
    const crashed = createDatabase(d);
    const nsStopped = await PidNamespace.start();
    const nsCrashed = await PidNamespace.start();
    try {
      const far = Date.now() + 10 * LEASE_EXPIRY_MS;
      const holder = startChild('holder', 'holder', stopped.dbPath, stopped.dir, far, nsStopped.prefix());
      const idle = startChild('idle', 'idle', stopped.dbPath, stopped.dir, far, nsStopped.prefix());
      const victim = startChild('holder', 'victim', crashed.dbPath, crashed.dir, far, nsCrashed.prefix());
      await Promise.all([waitForOutput(holder, 'locked'), waitForOutput(idle, 'ready'), waitForOutput(victim, 'locked')]);
      // The node processes themselves (children of nsenter): SIGSTOP cannot be forwarded.
      const holderNode = await firstChild(holder.proc.pid as number);
      const idleNode = await firstChild(idle.proc.pid as number);
      process.kill(holderNode, 'SIGSTOP');
      process.kill(idleNode, 'SIGSTOP');
      nsCrashed.kill();
      const stoppedAt = Date.now();

      const deadline = stoppedAt + LEASE_EXPIRY_MS + 16_000;
      const w1 = startChild('writer', 'w1', stopped.dbPath, stopped.dir, deadline);
      const w2 = startChild('writer', 'w2', crashed.dbPath, crashed.dir, deadline);
      // Well inside the lease: nobody may have taken the write lock from either owner.
      await new Promise((r) => setTimeout(r, LEASE_EXPIRY_MS - 10_000));
      expect(loggedSeqs(w1), 'no commit while the stopped owner\'s lease runs').toEqual([]);
      expect(loggedSeqs(w2), 'no commit while the crashed owner\'s lease runs').toEqual([]);
      // After the expiry both writers get the lock.
      await until('a commit past the stopped owner', () => loggedSeqs(w1).length > 0, 20_000);
      await until('a commit past the crashed owner', () => loggedSeqs(w2).length > 0, 20_000);
      const tookMs = Date.now() - stoppedAt;

      // Wake both stopped processes: the holder's lease was revoked, so its commit fails and it writes nothing;
      // the idle one held no lock anybody needed, was not revoked, and writes normally.
      // nsenter stops itself when its child stops (job control): continue both.
      for (const pid of [holderNode, idleNode, holder.proc.pid, idle.proc.pid]) process.kill(pid as number, 'SIGCONT');
      holder.proc.stdin?.write('commit\n');
      idle.proc.stdin?.write('go\n');
      await until('the woken processes report', () => holder.stdout.includes('commit') && idle.stdout.includes('commit'), 10_000);
      const beforeWake = loggedSeqs(w1).length;
      await waitAll([holder, idle, w1, w2], deadline);
      expect(lastJson(holder)).toMatchObject({ commit: 'error' });
      expect(lastJson(idle)).toEqual({ commit: 'ok' });
      expect(loggedSeqs(w1).length, 'the woken holder\'s record blocks nobody again').toBeGreaterThan(beforeWake);

      for (const [{ dbPath }, writers] of [
        [stopped, [holder, idle, w1]],
        [crashed, [w2]],
      ] as const) {
        const db = d.open(dbPath, { busyTimeoutMs: 10_000 });
        const { logged, counter } = verify(db, writers);
        db.close();
        expect(counter, `${dbPath}: every acknowledged increment, and only those`).toBe(logged);
        const native = nativeView(dbPath);
        if (native !== undefined) expect(native).toEqual({ counter, rows: counter, integrity: 'ok' });
      }
      console.log(
        `stopped/crashed owners: writers went on ${(tookMs / 1000).toFixed(1)} s after the stop (lease ${LEASE_EXPIRY_MS / 1000} s); ` +
          `woken holder: ${JSON.stringify(lastJson(holder))}; ${loggedSeqs(w1).length} + ${loggedSeqs(w2).length} increments after`,
      );
    } finally {
      nsStopped.kill();
      nsCrashed.kill();
    }
  }, 150_000);
});
