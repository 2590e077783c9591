import { describe, expect, it } from 'vitest';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { discover, heartbeat, register, requireSession, SESSION_EXPIRY_MS } from '../../src/bus/identity.js';
import { send } from '../../src/bus/send.js';
import { busError, createBus } from './bus-fixture.js';

describe('register', () => {
  it('grants the requested name, then numeric suffixes to other processes', async () => {
    const bus = await createBus();
    const [a, b, c] = await Promise.all([bus.process('A'), bus.process('B'), bus.process('C')]);
    expect(register(a, { name: 'Sam' })).toEqual({ display_name: 'Sam', resumed: false, subscriptions: [] });
    expect(register(b, { name: 'Sam' }).display_name).toBe('Sam2');
    expect(register(c, { name: 'Sam' }).display_name).toBe('Sam3');
  });

  it('names children parent/name with -N suffixes', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    expect(register(a, { name: 'Sam' }).display_name).toBe('Sam');
    expect(register(a, { name: 'implement804', parent: 'Sam' }).display_name).toBe('Sam/implement804');
    expect(register(b, { name: 'implement804', parent: 'Sam' }).display_name).toBe('Sam/implement804-2');
    expect(register(b, { name: 'x', parent: 'Sam/implement804-2' }).display_name).toBe('Sam/implement804-2/x');
  });

  it('is idempotent for the process that holds the name: same name, refreshed context', async () => {
    const bus = await createBus();
    const a = await bus.process('A');
    register(a, { name: 'Sam', context: 'one' });
    bus.clock.advance(5_000);
    expect(register(a, { name: 'Sam', context: 'two' }).display_name).toBe('Sam');
    expect(requireSession(a, 'Sam')).toEqual({ sender: 'Sam', context: 'two' });
    const b = await bus.process('B');
    expect(register(b, { name: 'Sam' }).display_name).toBe('Sam2');
    expect(register(b, { name: 'Sam' }).display_name).toBe('Sam2');
    expect(a.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 2 });
  });

  it('uses the default context when none is given', async () => {
    const bus = await createBus();
    const a = await bus.process('A');
    register(a, { name: 'Sam' });
    expect(requireSession(a, 'Sam').context).toBe('repo');
  });

  it('lets another process take a name whose heartbeat is older than 30 s; the stalled one gets not_registered', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    register(a, { name: 'Sam' });
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    expect(register(b, { name: 'Sam' }).display_name).toBe('Sam2');
    bus.clock.advance(2);
    // Sam2 (B) registered later and is still live; Sam (A) has now expired.
    expect(register(b, { name: 'Sam', parent: undefined }).display_name).toBe('Sam2');
    const c = await bus.process('C');
    expect(register(c, { name: 'Sam' }).display_name).toBe('Sam');
    const lost = await busError(() => requireSession(a, 'Sam'));
    expect(lost.code).toBe('not_registered');
    expect(lost.field).toBe('as');
    expect((await busError(() => createChannel(a, { as: 'Sam', name: 'general' }))).code).toBe('not_registered');
    // The stalled process's heartbeat no longer touches the name it lost.
    expect(heartbeat(a)).toBe(0);
  });

  it('keeps a name alive with heartbeats', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    register(a, { name: 'Sam' });
    register(a, { name: 'kid', parent: 'Sam' });
    for (let i = 0; i < 5; i++) {
      bus.clock.advance(10_000);
      expect(heartbeat(a)).toBe(2);
    }
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    expect(register(b, { name: 'Sam' }).display_name).toBe('Sam2');
  });

  it('rejects names with "/", control characters, or over 128 bytes, naming the field', async () => {
    const bus = await createBus();
    const a = await bus.process('A');
    for (const name of ['a/b', 'a\nb', '', 'é'.repeat(65), 'x'.repeat(129)]) {
      const error = await busError(() => register(a, { name }));
      expect(error.code).toBe('validation');
      expect(error.field).toBe('name');
    }
    expect(register(a, { name: 'é'.repeat(64) }).display_name).toBe('é'.repeat(64));
    expect((await busError(() => register(a, { name: 'Sam', extra: 1 }))).field).toBe('extra');
    expect((await busError(() => register(a, { name: 'Sam', resume: 'yes' }))).field).toBe('resume');
    expect((await busError(() => register(a, { name: 'Sam', parent: 'a//b' }))).field).toBe('parent');
    expect((await busError(() => register(a, {}))).field).toBe('name');
    expect((await busError(() => register(a, 'Sam'))).field).toBe('arguments');
    expect(a.db.get('SELECT count(*) AS n FROM sessions')).toEqual({ n: 1 });
  });
});

describe('resume', () => {
  it('a resumed identity lists its subscriptions with pending counts; resume:false drops them', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    register(a, { name: 'Sam' });
    register(b, { name: 'Kim' });
    createChannel(a, { as: 'Sam', name: 'general' });
    createChannel(a, { as: 'Sam', name: 'quiet' });
    subscribe(a, { as: 'Sam', channel: 'general' });
    subscribe(a, { as: 'Sam', channel: 'quiet' });
    await send(b, { as: 'Kim', channel: 'general', content: 'one' });
    await send(b, { as: 'Kim', channel: 'general', content: 'two' });
    await send(a, { as: 'Sam', channel: 'general', content: 'mine' });

    // Process A goes away; a new process registers Sam after the expiry and resumes.
    bus.clock.advance(SESSION_EXPIRY_MS + 1);
    const a2 = await bus.process('A2');
    expect(register(a2, { name: 'Sam' })).toEqual({
      display_name: 'Sam',
      resumed: true,
      subscriptions: [
        { channel: 'general', pending: 2 },
        { channel: 'quiet', pending: 0 },
      ],
    });
    expect(register(a2, { name: 'Sam', resume: false })).toEqual({ display_name: 'Sam', resumed: false, subscriptions: [] });
    expect(a2.db.get("SELECT count(*) AS n FROM subscriptions WHERE sender = 'Sam'")).toEqual({ n: 0 });
  });
});

describe('discover', () => {
  it('lists live sessions only', async () => {
    const bus = await createBus();
    const [a, b] = await Promise.all([bus.process('A'), bus.process('B')]);
    register(a, { name: 'Sam', context: 'agentbus' });
    bus.clock.advance(SESSION_EXPIRY_MS / 2);
    register(b, { name: 'Kim' });
    expect(discover(b, { as: 'Kim' }).sessions.map((s) => s.display_name)).toEqual(['Kim', 'Sam']);
    expect(discover(b, { as: 'Kim' }).sessions[1]).toEqual({
      display_name: 'Sam',
      context: 'agentbus',
      registered_at: new Date(bus.clock.ms - SESSION_EXPIRY_MS / 2).toISOString(),
    });
    bus.clock.advance(SESSION_EXPIRY_MS / 2 + 1);
    expect(discover(b, { as: 'Kim' }).sessions.map((s) => s.display_name)).toEqual(['Kim']);
  });

  it('is a validation error when discovery is disabled', async () => {
    const bus = await createBus({ discovery_enabled: false });
    const a = await bus.process('A');
    register(a, { name: 'Sam' });
    expect((await busError(() => discover(a, { as: 'Sam' }))).code).toBe('validation');
  });
});
