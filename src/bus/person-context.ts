/**
 * A person's writes (`agentbus post`, the web console's post, reply, memory
 * edit and delete) go through the tools' own code (validation, idempotency,
 * rate limit, inspection hook, capacity) under a name registered for the
 * length of one operation and released afterwards, so it is free again at once.
 */
import { randomUUID } from 'node:crypto';
import { currentProcess } from '../db/processes/process-identity.js';
import type { BusContext } from './bus-context.js';
import { register, releaseSessions } from './identity.js';

/** How a caller wraps the register step: the CLI turns its BusError into the command's error; by default it is left as it is. */
export type RegisterStep = <R>(step: () => R | Promise<R>) => Promise<R>;

/** Registers `name` (or the suffixed name the bus gives when it is held) on `base`'s database, runs `use` as that name, then releases it. */
export async function asPerson<T>(
  base: Omit<BusContext, 'owner' | 'processIdentity'>,
  name: string,
  use: (ctx: BusContext, as: string) => Promise<T>,
  registering: RegisterStep = async (step) => step(),
): Promise<T> {
  // The process identity is recorded with the name, so the name is free at once if this process dies before releasing it.
  const ctx: BusContext = { ...base, owner: randomUUID(), processIdentity: currentProcess() };
  const { display_name: as } = await registering(() => register(ctx, { name }));
  try {
    return await use(ctx, as);
  } finally {
    releaseSessions(ctx);
  }
}
