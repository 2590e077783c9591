import { describe, expect, it } from 'vitest';
import { ReceiveOutput } from '../../src/bus/receive.js';
import { SendOutput } from '../../src/bus/send.js';
import { killMcp, startMcp } from '../support/mcp-process.js';
import { openTestDatabase, tempDir } from '../support/test-driver.js';
import { toolAnswer } from '../support/tool-answer.js';

async function rows(dir: string, sql: string): Promise<unknown[]> {
  const { db } = await openTestDatabase(dir);
  try {
    return db.all(sql);
  } finally {
    db.close();
  }
}

describe.each(['SIGKILL', 'SIGHUP'] as const)('an agent whose server dies by %s', (signal) => {
  it('registers its name again at once and gets back its subscriptions, cursor and pending batch; a same-key re-send returns the original seq', async () => {
    const dir = tempDir();
    const [boss, worker] = await Promise.all([startMcp(dir), startMcp(dir)]);
    await boss.call('register', { name: 'Boss' });
    expect((await worker.call('register', { name: 'Worker' })).display_name).toBe('Worker');
    await boss.call('create_channel', { as: 'Boss', name: 'work', kind: 'ordinary' });
    await worker.call('subscribe', { as: 'Worker', channel: 'work' });
    await worker.call('subscribe', { as: 'Worker', channel: 'general' });

    // One task received and acknowledged: the cursor moves past it.
    await boss.call('send', { as: 'Boss', channel: 'work', content: 'task 1' });
    const first = toolAnswer(ReceiveOutput, await worker.call('receive', { as: 'Worker' }), 'receive');
    await worker.call('receive', { as: 'Worker', ack: first.batch_token });
    // Two more received but not acknowledged: the pending batch.
    const t2 = toolAnswer(SendOutput, await boss.call('send', { as: 'Boss', channel: 'work', content: 'task 2' }), 'send');
    const t3 = toolAnswer(SendOutput, await boss.call('send', { as: 'Boss', channel: 'work', content: 'task 3' }), 'send');
    const pending = toolAnswer(ReceiveOutput, await worker.call('receive', { as: 'Worker' }), 'receive');
    expect(pending.messages.map((m) => m.seq)).toEqual([t2.seq, t3.seq]);
    // A report whose reply the agent never saw: the server dies right after committing it.
    const report = { as: 'Worker', channel: 'work', content: 'report on task 2', idempotency_key: 'report-task-2' };
    const sent = toolAnswer(SendOutput, await worker.call('send', report), 'send');
    await killMcp(worker, signal);

    const restarted = await startMcp(dir);
    expect(await restarted.call('register', { name: 'Worker', resume: true })).toEqual({
      display_name: 'Worker',
      resumed: true,
      subscriptions: [
        { channel: 'general', pending: 0 },
        { channel: 'work', pending: 2 },
      ],
    });
    const again = toolAnswer(ReceiveOutput, await restarted.call('receive', { as: 'Worker' }), 'receive');
    expect(again.redelivered).toBe(true);
    expect(again.batch_token).toBe(pending.batch_token);
    expect(again.messages.map((m) => m.content)).toEqual(['task 2', 'task 3']);
    expect(await restarted.call('send', report)).toEqual({ seq: sent.seq });
    expect(await rows(dir, "SELECT seq FROM messages WHERE content = 'report on task 2'")).toEqual([{ seq: sent.seq }]);

    const done = toolAnswer(ReceiveOutput, await restarted.call('receive', { as: 'Worker', ack: again.batch_token }), 'receive');
    expect(done.messages).toEqual([]);
    expect(done.notices).toEqual([]);
    // The boss still sees one report, from the same name.
    await boss.call('subscribe', { as: 'Boss', channel: 'work', from: 'oldest' });
    const seen = toolAnswer(ReceiveOutput, await boss.call('receive', { as: 'Boss' }), 'receive');
    expect(seen.messages.map((m) => [m.sender, m.content])).toEqual([['Worker', 'report on task 2']]);
  });
});
