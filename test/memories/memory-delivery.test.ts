import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { subscribe } from '../../src/bus/channels.js';
import { deleteMemory, editMemory } from '../../src/bus/memories.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import { busFixture, channel, registerAs, type Fixture } from '../support/bus.js';

let fx: Fixture;
let sam: string;
let kim: string;

beforeEach(async () => {
  fx = await busFixture();
  sam = registerAs(fx.ctx, 'Sam');
  kim = registerAs(fx.ctx, 'Kim');
  channel(fx.ctx, sam, 'notes', 'memory');
  subscribe(fx.ctx, { as: kim, channel: 'notes' });
});

afterEach(async () => {
  await fx.close();
});

async function take(): Promise<{ seq: number; memory_id?: number; revision?: number; content: string }[]> {
  const result = await receive(fx.ctx, { as: kim });
  if (result.batch_token !== null) await receive(fx.ctx, { as: kim, ack: result.batch_token });
  return result.messages;
}

describe('memory delivery', () => {
  it('delivers an edited memory once, with its current content, at its own position', async () => {
    const id = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'v1' })).memory_id as number;
    const other = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'another memory' })).seq;
    await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v2' });
    const last = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v3' });

    const first = await take();
    expect(first.map((m) => [m.seq, m.memory_id, m.revision, m.content])).toEqual([
      [other, other, 1, 'another memory'],
      [last.seq, id, 3, 'v3'],
    ]);

    const next = await editMemory(fx.ctx, { as: sam, memory_id: id, content: 'v4' });
    expect((await take()).map((m) => [m.seq, m.revision, m.content])).toEqual([[next.seq, 4, 'v4']]);
    expect(await take()).toEqual([]);
  });

  it('delivers nothing for a memory deleted before delivery, and no row for a later delete', async () => {
    const gone = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'short-lived' })).memory_id as number;
    await editMemory(fx.ctx, { as: sam, memory_id: gone, content: 'short-lived v2' });
    await deleteMemory(fx.ctx, { as: sam, memory_id: gone });
    const kept = (await send(fx.ctx, { as: sam, channel: 'notes', content: 'kept' })).seq;
    expect((await take()).map((m) => m.seq)).toEqual([kept]);
    await deleteMemory(fx.ctx, { as: sam, memory_id: kept });
    expect(await take()).toEqual([]);
  });
});
