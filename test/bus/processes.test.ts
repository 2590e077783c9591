import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openTestDatabase, tempDir, testDriverName } from '../support/test-driver.js';

async function registerInChild(dataDir: string, owner: string, name: string, startAt: number): Promise<string> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./register-child.js', import.meta.url)), dataDir, owner, name, String(startAt)], {
    env: { ...process.env, AGENTBUS_DRIVER: testDriverName() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`child ${owner} exited ${code}: ${stderr}`);
  return (JSON.parse(stdout.trim()) as { display_name: string }).display_name;
}

describe('registration across processes', () => {
  it('processes registering one name at the same instant all get distinct names', async () => {
    const dir = tempDir();
    const { db } = await openTestDatabase(dir);
    db.close();
    const startAt = Date.now() + 1500;
    const names = await Promise.all(['P1', 'P2', 'P3', 'P4'].map((owner) => registerInChild(dir, owner, 'Sam', startAt)));
    expect([...names].sort()).toEqual(['Sam', 'Sam2', 'Sam3', 'Sam4']);
  });
});
