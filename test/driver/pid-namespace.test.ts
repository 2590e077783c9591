/**
 * Both drivers with processes in other pid namespaces (containers,
 * sandboxes) on one data directory: openers racing to create the database
 * (the set-up lock) and then writing. A pid of another namespace means
 * nothing here; before realms and leases the set-up lock was taken from a
 * live owner ("ENOENT ... setup-lock/owner.tmp") and the wasm driver lost
 * writes.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../support/child-process.js';
import { ownNamespacePrefix, pidNamespacesUnavailable, PidNamespace } from '../support/pid-namespace.js';
import { openTestDatabase, tempDir, testDriverName } from '../support/test-driver.js';

const ROUNDS = 3;
const ROWS = 40;
const unavailable = pidNamespacesUnavailable();

interface Run {
  readonly tag: string;
  readonly code: number | null;
  readonly output: string;
}

function writer(dir: string, tag: string, prefix: readonly string[]): Promise<Run> {
  const command = [...prefix, process.execPath, fixturePath('db-child.js'), 'write', dir, String(ROWS), tag];
  const child = spawn(command[0] as string, command.slice(1), {
    env: { ...process.env, AGENTBUS_DRIVER: testDriverName() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ tag, code, output })));
}

describe.skipIf(unavailable !== undefined)(`processes in other pid namespaces${unavailable === undefined ? '' : ` (skipped: ${unavailable})`}`, () => {
  it(`create and write one new database from inside and outside pid namespaces at once, ${ROUNDS} rounds: every opener succeeds, every row lands`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = tempDir();
      const shared = await PidNamespace.start();
      try {
        const runs = await Promise.all([
          writer(dir, 'out0', []),
          writer(dir, 'out1', []),
          writer(dir, 'shared0', shared.prefix()),
          writer(dir, 'shared1', shared.prefix()),
          writer(dir, 'own0', ownNamespacePrefix()),
          writer(dir, 'own1', ownNamespacePrefix()),
        ]);
        for (const r of runs) expect({ tag: r.tag, code: r.code }, `round ${round}, ${r.tag}: ${r.output}`).toEqual({ tag: r.tag, code: 0 });
        const { db } = await openTestDatabase(dir);
        expect(db.pragma('integrity_check')).toBe('ok');
        expect(db.all('SELECT tag, count(*) AS rows, count(DISTINCT n) AS n FROM t GROUP BY tag ORDER BY tag')).toEqual(
          runs
            .map((r) => r.tag)
            .sort()
            .map((tag) => ({ tag, rows: ROWS, n: ROWS })),
        );
        db.close();
      } finally {
        shared.kill();
      }
    }
  }, 240_000);
});
