/**
 * Many patterns against many paths, fast: the commit guard checks every
 * staged path against every live exclusive reservation. Patterns are filed
 * under their literal prefix (the leading segments without wildcards; every
 * path a pattern covers starts with it), so a path meets only the patterns
 * filed under one of its own leading-segment prefixes: a handful of map
 * lookups per path instead of a match against every pattern.
 */
import { compilePattern, type CompiledPattern } from './reservations-patterns.js';

export class PathIndex<T> {
  readonly #byPrefix = new Map<string, { pattern: CompiledPattern; value: T }[]>();

  /** Files `value` under canonical `pattern`. */
  add(pattern: string, value: T): void {
    const compiled = compilePattern(pattern);
    const key = compiled.prefix.join('/');
    const list = this.#byPrefix.get(key);
    if (list === undefined) this.#byPrefix.set(key, [{ pattern: compiled, value }]);
    else list.push({ pattern: compiled, value });
  }

  /** The values whose patterns cover `path`, in the order they were added per prefix, shortest prefix first. */
  covering(path: string): T[] {
    const found: T[] = [];
    const visit = (key: string): void => {
      for (const entry of this.#byPrefix.get(key) ?? []) if (entry.pattern.covers(path)) found.push(entry.value);
    };
    visit('');
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) visit(path.slice(0, slash));
    visit(path);
    return found;
  }
}
