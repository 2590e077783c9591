import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../support/child-process.js';
import { openTestDatabase, tempDir, testDriverEnv, testDriverName } from '../support/test-driver.js';

interface Registered {
  readonly child: ChildProcessWithoutNullStreams;
  readonly displayName: string;
}

/** Starts a child that registers `name` at `startAt` and keeps running until its stdin closes. */
async function registerInChild(dataDir: string, owner: string, name: string, startAt: number): Promise<Registered> {
  const child = spawn(process.execPath, [fixturePath('register-child.js'), dataDir, owner, name, String(startAt)], {
    env: { ...process.env, AGENTBUS_DRIVER: testDriverName(), ...testDriverEnv(dataDir) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.includes('\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`child ${owner} exited ${code} before registering: ${stderr}`)));
  });
  return { child, displayName: (JSON.parse(stdout.trim()) as { display_name: string }).display_name };
}

async function stop({ child }: Registered): Promise<void> {
  const exited = child.exitCode !== null ? Promise.resolve() : once(child, 'exit');
  child.stdin.end();
  await exited;
  expect(child.exitCode).toBe(0);
}

describe('registration across processes', () => {
  it('running processes registering one name at the same instant all get distinct names', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.close();
    const startAt = Date.now() + 1500;
    const children = await Promise.all(['P1', 'P2', 'P3', 'P4'].map((owner) => registerInChild(dir, owner, 'Sam', startAt)));
    try {
      expect(children.map((c) => c.displayName).sort()).toEqual(['Sam', 'Sam2', 'Sam3', 'Sam4']);
    } finally {
      await Promise.all(children.map(stop));
    }
  });
});
