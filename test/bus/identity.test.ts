import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { createChannel, subscribe } from '../../src/bus/channels.js';
import { discover, heartbeat, register, releaseSessions, requireSession, SESSION_EXPIRY_MS } from '../../src/bus/identity.js';
import { receive } from '../../src/bus/receive.js';
import { send } from '../../src/bus/send.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { deadProcess } from '../support/process-identities.js';
import { TestClock } from '../support/test-clock.js';
import { createBus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

const HOUR = 3_600_000;

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
    const lost = await expectError(() => requireSession(a, 'Sam'), BusError);
    expect(lost.code).toBe('not_registered');
    expect(lost.field).toBe('as');
    expect((await expectError(() => createChannel(a, { as: 'Sam', name: 'general' }), BusError)).code).toBe('not_registered');
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
      const error = await expectError(() => register(a, { name }), BusError);
      expect(error.code).toBe('validation');
      expect(error.field).toBe('name');
    }
    expect(register(a, { name: 'é'.repeat(64) }).display_name).toBe('é'.repeat(64));
    expect((await expectError(() => register(a, { name: 'Sam', extra: 1 }), BusError)).field).toBe('extra');
    expect((await expectError(() => register(a, { name: 'Sam', resume: 'yes' }), BusError)).field).toBe('resume');
    expect((await expectError(() => register(a, { name: 'Sam', parent: 'a//b' }), BusError)).field).toBe('parent');
    expect((await expectError(() => register(a, {}), BusError)).field).toBe('name');
    expect((await expectError(() => register(a, 'Sam'), BusError)).field).toBe('arguments');
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

describe('who holds a name', () => {
  it('a name whose owner process is certainly dead is free at once: subscriptions, cursor, pending batch and receipts come back with it', async () => {
    const bus = await createBus();
    const [crashed, boss] = await Promise.all([bus.process('crashed', { processIdentity: await deadProcess() }), bus.process('boss')]);
    register(crashed, { name: 'Worker' });
    register(boss, { name: 'Boss' });
    createChannel(boss, { as: 'Boss', name: 'work' });
    subscribe(crashed, { as: 'Worker', channel: 'work' });
    const task = await send(boss, { as: 'Boss', channel: 'work', content: 'task' });
    const batch = await receive(crashed, { as: 'Worker' });
    const report = { as: 'Worker', channel: 'work', content: 'report', idempotency_key: 'report-1' };
    const sent = await send(crashed, report);

    // No time passes: the owner is dead, so nobody has to wait for its heartbeat to stop.
    const restarted = await bus.process('restarted', { processIdentity: currentProcess() });
    expect(register(restarted, { name: 'Worker' })).toEqual({ display_name: 'Worker', resumed: true, subscriptions: [{ channel: 'work', pending: 1 }] });
    const again = await receive(restarted, { as: 'Worker' });
    expect([again.redelivered, again.batch_token, again.messages.map((m) => m.seq)]).toEqual([true, batch.batch_token, [task.seq]]);
    expect(await send(restarted, report)).toEqual(sent);
    expect(restarted.db.get("SELECT count(*) AS n FROM messages WHERE content = 'report'")).toEqual({ n: 1 });
    expect((await expectError(() => requireSession(crashed, 'Worker'), BusError)).code).toBe('not_registered');
  });

  it('a live owner in this realm keeps its name however old its heartbeat, and a clock set forward changes nothing', async () => {
    const bus = await createBus();
    const running = await bus.process('running', { processIdentity: currentProcess() });
    register(running, { name: 'Ann' });
    bus.clock.advance(HOUR);
    bus.clock.jump(2 * HOUR);
    const newcomer = await bus.process('newcomer');
    expect(register(newcomer, { name: 'Ann' }).display_name).toBe('Ann2');
    expect(requireSession(running, 'Ann').sender).toBe('Ann');
    expect(discover(newcomer, { as: 'Ann2' }).sessions.map((s) => s.display_name)).toEqual(['Ann', 'Ann2']);
  });

  it('an owner in another realm holds its name while its heartbeat moves on the shared monotonic clock; wall-clock jumps change nothing', async () => {
    const bus = await createBus();
    const [container, b] = await Promise.all([bus.process('container'), bus.process('B')]);
    register(container, { name: 'Ann' });
    // Set forward two hours: the heartbeat is 2 h old by the wall clock, 0 s by the monotonic one.
    bus.clock.jump(2 * HOUR);
    expect(register(b, { name: 'Ann' }).display_name).toBe('Ann2');
    expect(requireSession(container, 'Ann').sender).toBe('Ann');
    // Set back four hours and the holder stops: its name is free 30 s later, not hours later.
    bus.clock.jump(-4 * HOUR);
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    heartbeat(b);
    const c = await bus.process('C');
    expect(register(c, { name: 'Ann' }).display_name).toBe('Ann3');
    bus.clock.advance(1);
    const d = await bus.process('D');
    expect(register(d, { name: 'Ann' }).display_name).toBe('Ann');
    expect((await expectError(() => requireSession(container, 'Ann'), BusError)).code).toBe('not_registered');
  });

  it('an owner on a monotonic clock this process cannot read is judged by watching its heartbeat change', async () => {
    const bus = await createBus();
    const far = new TestClock({ domain: 'another-machine' });
    const owner = await bus.process('far', { clock: far });
    register(owner, { name: 'Ann' });
    // Newcomers on this machine's clock; each keeps beating, as a running process does.
    const newcomers: BusContext[] = [];
    const registerHere = async (): Promise<string> => {
      for (const n of newcomers) heartbeat(n);
      const ctx = await bus.process(`here-${newcomers.length}`);
      newcomers.push(ctx);
      return register(ctx, { name: 'Ann' }).display_name;
    };

    // First sight of this heartbeat: held, whatever the wall clocks say.
    far.jump(-2 * HOUR);
    expect(await registerHere()).toBe('Ann2');
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    expect(await registerHere()).toBe('Ann3');
    // It beats (its heartbeat value changes, even with its clock set back): seen anew, held again.
    far.advance(10_000);
    heartbeat(owner);
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    expect(await registerHere()).toBe('Ann4');
    // Its new heartbeat stays the same for 30 s of this clock from when it was first seen: it has stopped.
    bus.clock.advance(SESSION_EXPIRY_MS - 1);
    expect(await registerHere()).toBe('Ann5');
    bus.clock.advance(1);
    expect(await registerHere()).toBe('Ann');
    expect((await expectError(() => requireSession(owner, 'Ann'), BusError)).code).toBe('not_registered');
    expect(heartbeat(owner)).toBe(0);
  });

  it('a released name is free at once for every observer', async () => {
    const bus = await createBus();
    const far = new TestClock({ domain: 'another-machine' });
    const [a, b] = await Promise.all([bus.process('A', { clock: far }), bus.process('B')]);
    register(a, { name: 'Ann' });
    register(b, { name: 'Ann' });
    expect(releaseSessions(a)).toBe(1);
    expect(b.db.get('SELECT count(*) AS n FROM session_sightings')).toEqual({ n: 0 });
    const c = await bus.process('C');
    expect(register(c, { name: 'Ann' }).display_name).toBe('Ann');
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
    // A holder known dead is gone from the directory at once.
    const crashed = await bus.process('crashed', { processIdentity: await deadProcess() });
    register(crashed, { name: 'Lee' });
    expect(discover(b, { as: 'Kim' }).sessions.map((s) => s.display_name)).toEqual(['Kim']);
    // Who is not live can still be addressed: a direct message waits for them.
    expect(discover(b, { as: 'Kim' })).toMatchObject({ offline: ['Lee', 'Sam'], offline_more: false });
  });

  it('is a validation error when discovery is disabled', async () => {
    const bus = await createBus({ discovery_enabled: false });
    const a = await bus.process('A');
    register(a, { name: 'Sam' });
    expect((await expectError(() => discover(a, { as: 'Sam' }), BusError)).code).toBe('validation');
  });
});
