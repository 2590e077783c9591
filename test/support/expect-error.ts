/**
 * The one expect-error helper: the error a call throws, checked to be of the
 * layer's error class and, when given, to carry `code`. It fails the test when
 * the call succeeds or throws anything else. `expectErrorSync` is the same
 * check for a call that must throw synchronously.
 */
import { expect } from 'vitest';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** The codes an error class carries (BusError: BusErrorCode, ...); `string` only for a class whose `code` is a plain string. */
type CodeOf<E> = E extends { readonly code: infer C } ? C : never;

type Outcome = { threw: false } | { threw: true; error: unknown };

function checked<E extends Error>(outcome: Outcome, type: ErrorClass<E>, code: CodeOf<E> | undefined): E {
  if (!outcome.threw) throw new Error(`expected a ${type.name}${code === undefined ? '' : ` ${String(code)}`}, but the call succeeded`);
  if (!(outcome.error instanceof type)) throw outcome.error;
  if (code !== undefined) expect((outcome.error as E & { code?: unknown }).code, String(outcome.error)).toBe(code);
  return outcome.error;
}

export async function expectError<E extends Error>(fn: () => unknown, type: ErrorClass<E>, code?: CodeOf<E>): Promise<E> {
  let outcome: Outcome;
  try {
    await fn();
    outcome = { threw: false };
  } catch (error) {
    outcome = { threw: true, error };
  }
  return checked(outcome, type, code);
}

export function expectErrorSync<E extends Error>(fn: () => unknown, type: ErrorClass<E>, code?: CodeOf<E>): E {
  let outcome: Outcome;
  try {
    fn();
    outcome = { threw: false };
  } catch (error) {
    outcome = { threw: true, error };
  }
  return checked(outcome, type, code);
}
