/**
 * The one expect-error helper: the error a call throws, checked to be of the
 * layer's error class and, when given, to carry `code`. It fails the test when
 * the call succeeds or throws anything else.
 */
import { expect } from 'vitest';

type ErrorClass<E> = abstract new (...args: never[]) => E;

export async function expectError<E extends Error>(fn: () => unknown, type: ErrorClass<E>, code?: string): Promise<E> {
  let thrown: unknown;
  let threw = false;
  try {
    await fn();
  } catch (error) {
    thrown = error;
    threw = true;
  }
  if (!threw) throw new Error(`expected a ${type.name}, but the call succeeded`);
  if (!(thrown instanceof type)) throw thrown;
  if (code !== undefined) expect((thrown as E & { code?: unknown }).code).toBe(code);
  return thrown;
}
