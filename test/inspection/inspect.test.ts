import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BusError, type BusErrorCode } from '../../src/bus/bus-error.js';
import { REASON_CAP_BYTES, inspect, type InspectionRequest } from '../../src/bus/inspect.js';
import { createMemoryLogger } from '../../src/log.js';
import { expectError } from '../support/expect-error.js';
import { fixturePath } from '../support/child-process.js';
import { tempDir } from '../support/test-driver.js';

const HOOK = fixturePath('hooks/hook.js');
const SECRET = 'payload-secret-7f3a';
const request: InspectionRequest = { operation: 'send', sender: 'alice', payload: { channel: 'general', content: SECRET } };

function settings(args: readonly string[], timeoutSeconds = 10) {
  return { command: [process.execPath, HOOK, ...args], timeoutSeconds, log: createMemoryLogger() };
}

async function failure(promise: Promise<void>): Promise<{ code: BusErrorCode; message: string; retryable: boolean }> {
  const error = await expectError(() => promise, BusError);
  return { code: error.code, message: error.message, retryable: error.retryable };
}

describe('inspection hook', () => {
  it('no command means allow, without spawning anything', async () => {
    const log = createMemoryLogger();
    await expect(inspect({ command: [], timeoutSeconds: 1, log }, request)).resolves.toBeUndefined();
    expect(log.entries).toEqual([]);
  });

  it('allow: the hook gets one JSON object {operation, sender, payload} on stdin', async () => {
    const file = join(tempDir(), 'input.json');
    const s = settings(['record', file]);
    await expect(inspect(s, request)).resolves.toBeUndefined();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ operation: 'send', sender: 'alice', payload: request.payload });
  });

  it('allow also for a hook run directly through its #! line', async () => {
    const s = { command: [HOOK, 'allow'], timeoutSeconds: 10, log: createMemoryLogger() };
    await expect(inspect(s, request)).resolves.toBeUndefined();
  });

  it('deny: inspection_rejected carrying the reason, not retryable', async () => {
    const err = await failure(inspect(settings(['deny', 'no secrets on general']), request));
    expect(err.code).toBe('inspection_rejected');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('no secrets on general');
  });

  it('deny without a reason is still inspection_rejected', async () => {
    expect((await failure(inspect(settings(['deny-silent']), request))).code).toBe('inspection_rejected');
  });

  it('a deny reason is bounded', async () => {
    const err = await failure(inspect(settings(['deny', 'é'.repeat(5_000)]), request));
    expect(err.code).toBe('inspection_rejected');
    expect(Buffer.byteLength(err.message)).toBeLessThan(REASON_CAP_BYTES + 200);
  });

  const unavailable: readonly (readonly [string, readonly string[]])[] = [
    ['timeout', ['sleep']],
    ['stdout over 64 KiB', ['flood-stdout']],
    ['stderr over 64 KiB', ['flood-stderr']],
    ['malformed output', ['malformed']],
    ['two JSON objects', ['two-objects']],
    ['a decision that is neither allow nor deny', ['wrong-shape']],
    ['empty output', ['empty']],
    ['non-zero exit, even with a valid decision', ['exit', '3']],
    ['a crash by signal', ['crash']],
  ];
  for (const [what, args] of unavailable) {
    it(`${what}: inspection_unavailable, retryable`, async () => {
      const err = await failure(inspect(settings(args, 1), request));
      expect(err.code).toBe('inspection_unavailable');
      expect(err.retryable).toBe(true);
    });
  }

  it('a missing executable: inspection_unavailable', async () => {
    const s = { command: [join(tempDir(), 'no-such-hook')], timeoutSeconds: 1, log: createMemoryLogger() };
    expect((await failure(inspect(s, request))).code).toBe('inspection_unavailable');
  });

  it('the timeout kills the whole process group, grandchildren included', async () => {
    const pidFile = join(tempDir(), 'grandchild.pid');
    const s = { command: ['/bin/sh', fixturePath('hooks/sleep-tree.sh'), pidFile], timeoutSeconds: 0.5, log: createMemoryLogger() };
    expect((await failure(inspect(s, request))).code).toBe('inspection_unavailable');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    const alive = () => {
      try {
        process.kill(pid, 0);
      } catch {
        return false;
      }
      // A killed orphan may linger as a zombie until init reaps it: dead all the same.
      const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
      return !/^\d+ \(.*\) Z/.test(stat);
    };
    // SIGKILL is delivered asynchronously; wait for it to land, never for a fixed time.
    for (let i = 0; i < 500 && alive(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(alive()).toBe(false);
  });

  it('logs the operation, sender and decision, never the payload', async () => {
    const denied = settings(['deny', 'not today']);
    await failure(inspect(denied, request));
    const broken = settings(['malformed']);
    await failure(inspect(broken, request));
    const entries = [...denied.log.entries, ...broken.log.entries];
    expect(entries.map((e) => [e.fields.operation, e.fields.sender])).toEqual([
      ['send', 'alice'],
      ['send', 'alice'],
    ]);
    expect(denied.log.entries[0]?.fields.decision).toBe('deny');
    expect(broken.log.entries[0]?.fields.problem).toBe('malformed_output');
    expect(JSON.stringify(entries)).not.toContain(SECRET);
  });
});
