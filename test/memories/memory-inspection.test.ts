import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BusError } from '../../src/bus/bus-error.js';
import { deleteMemory, editMemory } from '../../src/bus/memories.js';
import { send } from '../../src/bus/send.js';
import { tempDir } from '../support/test-driver.js';
import { busFixture, channel, registerAs, withConfig, type Fixture } from '../support/bus.js';
import { expectError } from '../support/expect-error.js';
import { revisions } from '../support/rows.js';

// A hook that appends what it was asked to a file and denies any payload mentioning "forbidden".
const HOOK = `
const fs = require('node:fs');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  fs.appendFileSync(process.argv[1], input + '\\n');
  const request = JSON.parse(input);
  const deny = JSON.stringify(request.payload).includes('forbidden');
  process.stdout.write(JSON.stringify(deny ? { decision: 'deny', reason: 'no forbidden words' } : { decision: 'allow' }));
});
`;

let fx: Fixture;
let sam: string;
let seen: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam');
  channel(fx.ctx, sam, 'notes', 'memory');
  seen = join(tempDir(), 'hook-log');
});

afterEach(async () => {
  await fx.close();
});

const hooked = () => withConfig(fx.ctx, { inspection_command: [process.execPath, '-e', HOOK, seen], inspection_timeout_seconds: 20 });
const requests = (): { operation: string; sender: string; payload: Record<string, unknown> }[] =>
  existsSync(seen) ? readFileSync(seen, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [];

describe('memory mutations and the inspection hook', () => {
  it('asks the hook before an edit and a delete, with the operation, sender and payload', async () => {
    const id = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'v1' })).memory_id as number;
    await editMemory(hooked(), { as: sam, memory_id: id, content: 'v2', idempotency_key: 'e1' });
    await editMemory(hooked(), { as: sam, memory_id: id, content: 'v2', idempotency_key: 'e1' });
    await deleteMemory(hooked(), { as: sam, memory_id: id });
    const asked = requests();
    // The replay did not run the hook again.
    expect(asked.map((r) => r.operation)).toEqual(['edit_memory', 'delete_memory']);
    expect(asked[0]).toMatchObject({ sender: sam, payload: { memory_id: id, channel: 'notes', content: 'v2', type: 'message' } });
    expect(asked[1]).toMatchObject({ sender: sam, payload: { memory_id: id, channel: 'notes' } });
  });

  it('changes nothing when the hook denies', async () => {
    const id = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'v1' })).memory_id as number;
    await expectError(() => editMemory(hooked(), { as: sam, memory_id: id, content: 'forbidden text' }), BusError, 'inspection_rejected');
    expect(revisions(fx.ctx, id).map((r) => [r.revision, r.tombstone])).toEqual([[1, 0]]);
  });
});
