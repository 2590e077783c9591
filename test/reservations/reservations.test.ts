import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BusContext } from '../../src/bus/bus-context.js';
import { heartbeat, register, SESSION_EXPIRY_MS } from '../../src/bus/identity.js';
import { listReservations, release, reserve, MAX_RESERVATIONS_PER_HOLDER } from '../../src/bus/reservations.js';
import { currentProcess } from '../../src/db/processes/process-identity.js';
import { createMaintenance } from '../../src/maintenance/tick.js';
import { deadProcess } from '../support/process-identities.js';
import { createBus, type Bus } from '../support/bus.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';
import { tempDir } from '../support/test-driver.js';
import { gitClone, gitRepo, gitWorktree } from './git-repo.js';

/** Two agents (separate connections and owner tokens) registered on one bus, working in `repo`. */
async function twoAgents(repo: string, bus?: Bus): Promise<{ bus: Bus; a: BusContext; b: BusContext }> {
  bus ??= await createBus();
  const a = await bus.process('owner-a', { workingDirectory: repo });
  const b = await bus.process('owner-b', { workingDirectory: repo });
  register(a, { name: 'Alice' });
  register(b, { name: 'Bob' });
  return { bus, a, b };
}

describe('reserve, renew, release, list (in process, real database and git)', () => {
  it('grants a reservation in the repository of the working directory and lists it for everyone', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    const got = reserve(a, { as: 'Alice', paths: ['src/cli/**', 'README.md'], reason: 'rewriting the CLI', ttl_seconds: 600 });
    expect(got.repository).toBe(join(repo, '.git'));
    expect(got.renewed).toEqual([]);
    expect(got.reservations).toEqual([
      { pattern: 'src/cli/**', display_name: 'Alice', exclusive: true, reason: 'rewriting the CLI', reserved_at: new Date(bus.clock.ms).toISOString(), expires_at: new Date(bus.clock.ms + 600_000).toISOString() },
      { pattern: 'README.md', display_name: 'Alice', exclusive: true, reason: 'rewriting the CLI', reserved_at: new Date(bus.clock.ms).toISOString(), expires_at: new Date(bus.clock.ms + 600_000).toISOString() },
    ]);
    const listed = listReservations(b, { as: 'Bob' });
    expect(listed.repository).toBe(join(repo, '.git'));
    expect(listed.reservations.map((r) => [r.pattern, r.display_name])).toEqual([
      ['README.md', 'Alice'],
      ['src/cli/**', 'Alice'],
    ]);
    expect(listReservations(b, { as: 'Bob', mine: true }).reservations).toEqual([]);
  });

  it('refuses an overlapping exclusive reservation whole, naming holder, pattern, reason and times; disjoint ones are granted', async () => {
    const repo = gitRepo();
    const { a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/cli/**'], reason: 'rewriting the CLI' });
    const error = await expectError(() => reserve(b, { as: 'Bob', paths: ['docs/**', 'src/cli/main.ts', 'src/*/main.ts'] }), BusError);
    expect(error.code).toBe('conflict');
    expect(error.field).toBe('paths');
    expect(error.message).toMatch(/nothing was reserved/);
    expect(error.message).toMatch(/"src\/cli\/main\.ts", "src\/\*\/main\.ts" overlaps Alice's exclusive reservation "src\/cli\/\*\*" \(reason: rewriting the CLI; since .*, expires .*\)/);
    expect(error.message).toMatch(/Ask Alice/);
    expect(error.toJSON().holders).toEqual([
      expect.objectContaining({ pattern: 'src/cli/**', display_name: 'Alice', exclusive: true, reason: 'rewriting the CLI', overlaps: ['src/cli/main.ts', 'src/*/main.ts'] }),
    ]);
    // All or nothing: the disjoint docs/** of the refused call was not reserved.
    expect(listReservations(b, { as: 'Bob', mine: true }).reservations).toEqual([]);
    expect(reserve(b, { as: 'Bob', paths: ['docs/**', 'src/bus/**'] }).reservations).toHaveLength(2);
  });

  it('shared reservations coexist; shared and exclusive refuse each other in both directions', async () => {
    const repo = gitRepo();
    const { a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['docs/**'], exclusive: false });
    reserve(b, { as: 'Bob', paths: ['docs/install.md'], exclusive: false });
    expect((await expectError(() => reserve(b, { as: 'Bob', paths: ['docs/api.md'] }), BusError)).code).toBe('conflict');
    reserve(a, { as: 'Alice', paths: ['src/**'] });
    const error = await expectError(() => reserve(b, { as: 'Bob', paths: ['src/a.ts'], exclusive: false }), BusError);
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/Alice's exclusive reservation "src\/\*\*"/);
    // One's own reservations never conflict with each other.
    expect(reserve(a, { as: 'Alice', paths: ['src/a.ts', 'docs/x.md'] }).reservations).toHaveLength(2);
  });

  it('reserving again renews: new expiry, reservation time and mode kept unless given, reason replaced only when given', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    const first = reserve(a, { as: 'Alice', paths: ['src/**'], exclusive: false, reason: 'tidying', ttl_seconds: 60 });
    bus.clock.advance(50_000);
    const again = reserve(a, { as: 'Alice', paths: ['src/**', 'lib/**'], ttl_seconds: 120 });
    expect(again.renewed).toEqual(['src/**']);
    const renewed = again.reservations[0]!;
    expect(renewed.reserved_at).toBe(first.reservations[0]!.reserved_at);
    expect(renewed.expires_at).toBe(new Date(bus.clock.ms + 120_000).toISOString());
    expect(renewed.exclusive).toBe(false);
    expect(renewed.reason).toBe('tidying');
    expect(again.reservations[1]).toMatchObject({ pattern: 'lib/**', exclusive: true, reason: null });
    // Past the first expiry, the renewed one still holds (Alice's process heartbeats meanwhile).
    bus.clock.advance(60_000);
    heartbeat(a);
    expect(listReservations(b, { as: 'Bob' }).reservations.map((r) => r.pattern)).toEqual(['lib/**', 'src/**']);
    // Renewing as exclusive is checked like a new exclusive reservation.
    reserve(b, { as: 'Bob', paths: ['src/x.ts'], exclusive: false });
    expect((await expectError(() => reserve(a, { as: 'Alice', paths: ['src/**'], exclusive: true }), BusError)).code).toBe('conflict');
    expect(reserve(a, { as: 'Alice', paths: ['src/**'], reason: 'still tidying' }).reservations[0]).toMatchObject({ exclusive: false, reason: 'still tidying' });
  });

  it('a reservation ends at its expiry: others may take the paths', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/**'], ttl_seconds: 30 });
    bus.clock.advance(29_999);
    expect((await expectError(() => reserve(b, { as: 'Bob', paths: ['src/a.ts'] }), BusError)).code).toBe('conflict');
    bus.clock.advance(1);
    expect(listReservations(b, { as: 'Bob' }).reservations).toEqual([]);
    expect(reserve(b, { as: 'Bob', paths: ['src/a.ts'] }).reservations).toHaveLength(1);
  });

  it('a reservation ends with its session: a holder that stops heartbeating loses it, and never gets it back beside the new holder', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/**'] });
    bus.clock.advance(SESSION_EXPIRY_MS + 1);
    // Bob is live because he acts (reserve refreshes his session); Alice's heartbeat is older than the expiry.
    expect(reserve(b, { as: 'Bob', paths: ['src/a.ts'] }).reservations).toHaveLength(1);
    // Alice wakes up: her name is still hers (nobody took it), but her claim is gone.
    expect(listReservations(a, { as: 'Alice', mine: true }).reservations).toEqual([]);
    const error = await expectError(() => reserve(a, { as: 'Alice', paths: ['src/**'] }), BusError);
    expect(error.code).toBe('conflict');
    expect(error.message).toMatch(/Bob's exclusive reservation "src\/a\.ts"/);
  });

  it('a reservation ends at once when its holder is certainly dead, and a wall-clock jump ends no live holder\'s reservation', async () => {
    const repo = gitRepo();
    const bus = await createBus();
    const crashed = await bus.process('owner-crashed', { workingDirectory: repo, processIdentity: await deadProcess() });
    const running = await bus.process('owner-running', { workingDirectory: repo, processIdentity: currentProcess() });
    const b = await bus.process('owner-b', { workingDirectory: repo });
    register(crashed, { name: 'Carl' });
    register(running, { name: 'Alice' });
    register(b, { name: 'Bob' });
    reserve(crashed, { as: 'Carl', paths: ['docs/**'], ttl_seconds: 86_400 });
    reserve(running, { as: 'Alice', paths: ['src/**'], ttl_seconds: 86_400 });
    // No time passes: Carl's process is gone, so his claim is too.
    expect(listReservations(b, { as: 'Bob' }).reservations.map((r) => r.display_name)).toEqual(['Alice']);
    expect(reserve(b, { as: 'Bob', paths: ['docs/a.md'], ttl_seconds: 86_400 }).reservations).toHaveLength(1);
    // The clock is set forward 2 h (well within the ttl, itself on the wall clock): Alice's heartbeat is 2 h old by the wall clock, which proves nothing.
    bus.clock.jump(2 * 3_600_000);
    expect((await expectError(() => reserve(b, { as: 'Bob', paths: ['src/a.ts'] }), BusError)).code).toBe('conflict');
    const tick = await createMaintenance({ db: b.db, config: bus.config, clock: bus.clock, log: b.log, owner: 'owner-b', processIdentity: undefined }).runTick();
    expect(tick.steps.find((s) => s.name === 'reservations')?.rows).toBe(0);
    expect(listReservations(running, { as: 'Alice', mine: true }).reservations.map((r) => r.pattern)).toEqual(['src/**']);
  });

  it('a ttl runs on the monotonic clock: a wall clock set forward ends no claim early, one set back keeps none past its ttl', async () => {
    const repo = gitRepo();
    const bus = await createBus();
    // Alice's process is alive, so her name (and so her claims) is held whatever the clocks say: only the ttl can end them.
    const a = await bus.process('owner-a', { workingDirectory: repo, processIdentity: currentProcess() });
    const b = await bus.process('owner-b', { workingDirectory: repo, processIdentity: currentProcess() });
    register(a, { name: 'Alice' });
    register(b, { name: 'Bob' });
    const maintenance = createMaintenance({ db: b.db, config: bus.config, clock: bus.clock, log: b.log, owner: 'owner-b', processIdentity: undefined });

    reserve(a, { as: 'Alice', paths: ['src/**'], ttl_seconds: 600 });
    bus.clock.advance(100_000);
    bus.clock.jump(2 * 3_600_000);
    // 500 s of the 600 are left, whatever the wall clock reads.
    expect((await expectError(() => reserve(b, { as: 'Bob', paths: ['src/a.ts'] }), BusError)).code).toBe('conflict');
    expect((await maintenance.runTick()).steps.find((s) => s.name === 'reservations')?.rows).toBe(0);
    expect(listReservations(b, { as: 'Bob' }).reservations.map((r) => [r.pattern, r.expires_at])).toEqual([['src/**', new Date(bus.clock.ms + 500_000).toISOString()]]);
    bus.clock.advance(500_000);
    expect(listReservations(b, { as: 'Bob' }).reservations).toEqual([]);
    expect(reserve(b, { as: 'Bob', paths: ['src/a.ts'], ttl_seconds: 3_600 }).reservations).toHaveLength(1);

    reserve(a, { as: 'Alice', paths: ['docs/**'], ttl_seconds: 600 });
    bus.clock.jump(-2 * 3_600_000);
    bus.clock.advance(600_000);
    // By the wall clock the claim has 2 h left; by the clock that measures its ttl it is over.
    expect(listReservations(b, { as: 'Bob' }).reservations.map((r) => r.pattern)).toEqual(['src/a.ts']);
    expect(reserve(b, { as: 'Bob', paths: ['docs/a.md'], ttl_seconds: 600 }).reservations).toHaveLength(1);
  });

  it('a reservation without a monotonic expiry (an older agentbus wrote it) or from another monotonic clock ends by the wall clock', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/**'], ttl_seconds: 600 });
    reserve(a, { as: 'Alice', paths: ['docs/**'], ttl_seconds: 600 });
    a.db.run("UPDATE reservations SET clock_domain = NULL, expires_mono = NULL WHERE pattern = 'src/**'");
    a.db.run("UPDATE reservations SET clock_domain = 'another-boot', expires_mono = 1 WHERE pattern = 'docs/**'");
    bus.clock.advance(1_000);
    heartbeat(a);
    expect(listReservations(b, { as: 'Bob' }).reservations.map((r) => [r.pattern, r.expires_at])).toEqual([
      ['docs/**', new Date(bus.clock.ms + 599_000).toISOString()],
      ['src/**', new Date(bus.clock.ms + 599_000).toISOString()],
    ]);
    bus.clock.jump(599_001);
    heartbeat(a);
    expect(listReservations(b, { as: 'Bob' }).reservations).toEqual([]);
  });

  it('a reservation belongs to the process that holds the name: a name taken over by another process does not inherit it', async () => {
    const repo = gitRepo();
    const { bus, a } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/**'] });
    bus.clock.advance(SESSION_EXPIRY_MS + 1);
    const c = await bus.process('owner-c', { workingDirectory: repo });
    expect(register(c, { name: 'Alice' }).display_name).toBe('Alice');
    expect(listReservations(c, { as: 'Alice' }).reservations).toEqual([]);
    expect(reserve(c, { as: 'Alice', paths: ['src/**'] }).renewed).toEqual([]);
  });

  it('release: the given patterns as reserved, or all of one\'s own; not_held names the rest', async () => {
    const repo = gitRepo();
    const { a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/**', 'docs/**', 'README.md'] });
    reserve(b, { as: 'Bob', paths: ['lib/**'] });
    expect(release(a, { as: 'Alice', paths: ['docs/**', 'docs/a.md', 'lib/**'] })).toEqual({
      repository: join(repo, '.git'),
      released: ['docs/**'],
      not_held: ['docs/a.md', 'lib/**'],
    });
    expect(reserve(b, { as: 'Bob', paths: ['docs/a.md'], ttl_seconds: 86_400 }).reservations).toHaveLength(1);
    expect(release(a, { as: 'Alice' })).toEqual({ repository: join(repo, '.git'), released: ['README.md', 'src/**'], not_held: [] });
    expect(listReservations(a, { as: 'Alice' }).reservations.map((r) => r.display_name)).toEqual(['Bob', 'Bob']);
  });

  it('list_reservations with paths: the reservations overlapping them, each with the given patterns it overlaps', async () => {
    const repo = gitRepo();
    const { a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['src/cli/**', 'docs/install.md'] });
    reserve(b, { as: 'Bob', paths: ['src/bus/**'], exclusive: false });
    const got = listReservations(b, { as: 'Bob', paths: ['src/cli/main.ts', 'src/**', '*.md'] });
    expect(got.reservations.map((r) => [r.pattern, r.display_name, r.overlaps])).toEqual([
      ['src/bus/**', 'Bob', ['src/**']],
      ['src/cli/**', 'Alice', ['src/cli/main.ts', 'src/**']],
    ]);
    expect(listReservations(b, { as: 'Bob', paths: ['src/**'], mine: true }).reservations.map((r) => r.pattern)).toEqual(['src/bus/**']);
  });

  it('worktrees of one clone share reservations; a separate clone does not; symlinks and subdirectories resolve to the same repository', async () => {
    const repo = gitRepo();
    const worktree = gitWorktree(repo, 'feature');
    const clone = gitClone(repo);
    const bus = await createBus();
    const a = await bus.process('owner-a', { workingDirectory: repo });
    const b = await bus.process('owner-b', { workingDirectory: worktree });
    const c = await bus.process('owner-c', { workingDirectory: clone });
    register(a, { name: 'Alice' });
    register(b, { name: 'Bob' });
    register(c, { name: 'Carol' });
    reserve(a, { as: 'Alice', paths: ['src/**'] });
    const inWorktree = await expectError(() => reserve(b, { as: 'Bob', paths: ['src/a.ts'] }), BusError);
    expect(inWorktree.code).toBe('conflict');
    expect(reserve(c, { as: 'Carol', paths: ['src/a.ts'] }).repository).toBe(join(clone, '.git'));
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    const link = join(tempDir(), 'link');
    symlinkSync(repo, link);
    for (const dir of [join(repo, 'src', 'deep'), link, worktree]) {
      expect(listReservations(c, { as: 'Carol', repository: dir }).repository).toBe(realpathSync(join(repo, '.git')));
    }
  });

  it('validates every field before touching anything, naming the field and the fix', async () => {
    const repo = gitRepo();
    const { a } = await twoAgents(repo);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ as: 'Alice' }, 'paths', /paths: is required/],
      [{ as: 'Alice', paths: [] }, 'paths', /at least one path/],
      [{ as: 'Alice', paths: 'src/**' }, 'paths', /must be an array/],
      [{ as: 'Alice', paths: ['src/**', '../x'] }, 'paths.1', /cannot leave it/],
      [{ as: 'Alice', paths: ['/etc/passwd'] }, 'paths.0', /relative to the repository root/],
      [{ as: 'Alice', paths: ['src'], ttl_seconds: 0 }, 'ttl_seconds', /at least 1/],
      [{ as: 'Alice', paths: ['src'], ttl_seconds: 86_401 }, 'ttl_seconds', /at most 86400/],
      [{ as: 'Alice', paths: ['src'], ttl_seconds: 1.5 }, 'ttl_seconds', /whole number/],
      [{ as: 'Alice', paths: ['src'], exclusive: 'yes' }, 'exclusive', /true .* or false/],
      [{ as: 'Alice', paths: ['src'], reason: 'a\nb' }, 'reason', /one line/],
      [{ as: 'Alice', paths: ['src'], repository: 'relative/dir' }, 'repository', /absolute path/],
      [{ as: 'Alice', paths: ['src'], repository: tempDir() }, 'repository', /not inside a git worktree/],
      [{ as: 'Alice', paths: ['src'], repository: '/no/such/dir' }, 'repository', /does not exist/],
      [{ as: 'Alice', paths: ['src'], owner: 'x' }, 'owner', /not a field/],
    ];
    for (const [input, field, message] of cases) {
      const error = await expectError(() => reserve(a, input), BusError);
      expect([error.code, error.field], JSON.stringify(input)).toEqual(['validation', field]);
      expect(error.message).toMatch(message);
    }
    expect((await expectError(() => reserve(a, { as: 'Nobody', paths: ['src'] }), BusError)).code).toBe('not_registered');
    expect(listReservations(a, { as: 'Alice' }).reservations).toEqual([]);

    // A server started outside any repository must be told where the repository is.
    const bus = await createBus();
    const outside = await bus.process('owner-x', { workingDirectory: tempDir() });
    register(outside, { name: 'Xavier' });
    const error = await expectError(() => reserve(outside, { as: 'Xavier', paths: ['src'] }), BusError);
    expect([error.code, error.field]).toEqual(['validation', 'repository']);
    expect(error.message).toMatch(/working directory is not in a git repository.*pass the absolute path of your checkout/);
    expect(reserve(outside, { as: 'Xavier', paths: ['src'], repository: repo }).repository).toBe(join(repo, '.git'));
  });

  it(`bounds the live reservations of one name in one repository at ${MAX_RESERVATIONS_PER_HOLDER}`, async () => {
    const repo = gitRepo();
    const { a } = await twoAgents(repo);
    for (let i = 0; i < MAX_RESERVATIONS_PER_HOLDER / 100; i++) {
      reserve(a, { as: 'Alice', paths: Array.from({ length: 100 }, (_, j) => `f/${i}/${j}.ts`) });
    }
    const error = await expectError(() => reserve(a, { as: 'Alice', paths: ['one/more.ts'] }), BusError);
    expect([error.code, error.field]).toEqual(['validation', 'paths']);
    expect(error.message).toMatch(/release some, or reserve a directory or glob/);
    // Renewing what one holds is always possible.
    expect(reserve(a, { as: 'Alice', paths: ['f/0/0.ts'] }).renewed).toEqual(['f/0/0.ts']);
  });

  it('the maintenance tick deletes expired reservations and those of ended sessions, and keeps live ones', async () => {
    const repo = gitRepo();
    const { bus, a, b } = await twoAgents(repo);
    reserve(a, { as: 'Alice', paths: ['a/**'], ttl_seconds: 10 });
    reserve(a, { as: 'Alice', paths: ['b/**'], ttl_seconds: 3600 });
    reserve(b, { as: 'Bob', paths: ['c/**'], ttl_seconds: 3600 });
    bus.clock.advance(20_000);
    const maintenance = createMaintenance({ db: a.db, config: bus.config, clock: bus.clock, log: a.log, owner: 'owner-a', processIdentity: undefined });
    const first = await maintenance.runTick();
    expect(first.steps.find((s) => s.name === 'reservations')?.rows).toBe(1);
    const count = () => a.db.get<{ n: number }>('SELECT count(*) AS n FROM reservations')?.n;
    expect(count()).toBe(2);
    // Bob stops heartbeating; Alice goes on.
    bus.clock.advance(SESSION_EXPIRY_MS);
    heartbeat(a);
    await maintenance.stop();
    const second = await createMaintenance({ db: a.db, config: bus.config, clock: bus.clock, log: a.log, owner: 'owner-a', processIdentity: undefined }).runTick();
    expect(second.steps.find((s) => s.name === 'reservations')?.rows).toBe(1);
    expect(a.db.all('SELECT pattern FROM reservations')).toEqual([{ pattern: 'b/**' }]);
  });
});
