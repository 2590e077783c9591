/**
 * Reading into parsed JSON (a JSON Schema, a tool's output) without casting:
 * `jsonAt(value, 'anyOf', 1, 'properties')` is the value there, and a step
 * that is missing fails the test naming the path so far.
 */

/** The value at `path` (object keys, array indexes) inside `value`. */
export function jsonAt(value: unknown, ...path: readonly (string | number)[]): unknown {
  let here = value;
  for (const [i, step] of path.entries()) {
    const missing = (): Error => new Error(`nothing at ${JSON.stringify(path.slice(0, i + 1))} in ${JSON.stringify(value)}`);
    if (typeof step === 'number') {
      if (!Array.isArray(here) || step >= here.length) throw missing();
      here = here[step] as unknown;
    } else {
      if (!isJsonObject(here) || !Object.hasOwn(here, step)) throw missing();
      here = here[step];
    }
  }
  return here;
}

/** The keys of the object at `path`, in order; fails the test when there is no object there. */
export function jsonKeysAt(value: unknown, ...path: readonly (string | number)[]): string[] {
  const here = jsonAt(value, ...path);
  if (!isJsonObject(here)) throw new Error(`not an object at ${JSON.stringify(path)}: ${JSON.stringify(here)}`);
  return Object.keys(here);
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
