/**
 * Reservation patterns: paths and globs relative to a repository root.
 *
 * A pattern is `/`-separated segments read from the repository root:
 * - `*` matches any run of characters within one segment (never a `/`),
 *   `?` exactly one; every other character is itself (`[id].tsx` is a file
 *   name, not a character class);
 * - `**` as a whole segment matches zero or more segments (`src/**`,
 *   `**\/*.md`, `docs/**\/index.md`);
 * - a pattern without wildcards in its last segment names a file or a
 *   directory and covers everything below it: `src/cli` and `src/cli/`
 *   cover `src/cli/main.ts`; `src/**` covers everything under `src`;
 * - a last segment with `*` or `?` matches names at that level only:
 *   `src/*.ts` is the .ts files directly in `src`, `*.md` covers
 *   `README.md` but not `docs/a.md` (patterns start at the root; write
 *   `**\/*.md` for every depth), `src/*` does not reach `src/cli/main.ts`;
 * - matching is case-sensitive and byte-exact, like git's index.
 *
 * No pattern can leave the root: absolute paths and `.`/`..` segments are
 * refused, as are backslashes, braces and leading `!`, which a user would
 * expect to mean something they do not mean here.
 */

/** The longest pattern accepted, in characters. */
export const PATTERN_MAX_LENGTH = 1024;

const GLOBSTAR = '**';
// C0 controls, DEL and C1 controls: invisible in a message, never in a pattern.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A checked pattern or the reason it was refused (a sentence that says what to write instead). */
export type PatternCheck = { readonly ok: true; readonly pattern: string } | { readonly ok: false; readonly problem: string };

/**
 * Checks `raw` and returns its canonical text: one trailing `/` dropped,
 * runs of `**` segments collapsed. Never throws.
 */
export function checkPattern(raw: string): PatternCheck {
  const refuse = (problem: string): PatternCheck => ({ ok: false, problem });
  if (raw.length === 0) return refuse('must not be empty: give a path relative to the repository root, e.g. "src/app.ts" or "src/**"');
  if (raw.length > PATTERN_MAX_LENGTH) return refuse(`must be at most ${PATTERN_MAX_LENGTH} characters (got ${raw.length})`);
  if (CONTROL.test(raw)) return refuse('must not contain control characters');
  if (raw.includes('\\')) return refuse('must use "/" between segments; a backslash is not a separator here (e.g. "src/cli/main.ts")');
  if (raw.startsWith('/')) return refuse(`must be relative to the repository root, not absolute: write "${raw.replace(/^\/+/, '')}" for a path under the root`);
  if (raw.startsWith('!')) return refuse('must not start with "!": exclusions are not supported; list the paths you do want');
  if (/[{}]/.test(raw)) return refuse('must not contain "{" or "}": brace lists are not supported; give each alternative as its own entry of paths');
  const body = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  const segments = body.split('/');
  if (segments.some((s) => s === '')) return refuse('has an empty segment ("//" or a trailing "//"); write each directory once, e.g. "src/cli/"');
  if (segments.some((s) => s === '.' || s === '..')) {
    return refuse('must not contain "." or ".." segments: write the path from the repository root (patterns cannot leave it)');
  }
  if (segments.some((s) => s !== GLOBSTAR && s.includes(GLOBSTAR))) {
    return refuse('uses "**" inside a segment; "**" stands alone between slashes ("src/**/test.ts"), "*" matches within a segment ("*.ts")');
  }
  const collapsed = segments.filter((s, i) => !(s === GLOBSTAR && segments[i - 1] === GLOBSTAR));
  return { ok: true, pattern: collapsed.join('/') };
}

/** True when `pattern` (canonical) has no wildcard: it names one file or directory. */
export function isLiteralPattern(pattern: string): boolean {
  return !/[*?]/.test(pattern);
}

/** True when the pattern covers what is below the paths it matches: its last segment is a plain name, or `**`. */
function coversBelow(segments: readonly string[]): boolean {
  const last = segments.at(-1) ?? '';
  return last === GLOBSTAR || !/[*?]/.test(last);
}

const escapeRegex = (text: string): string => text.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');

function segmentRegex(segment: string): string {
  let out = '';
  for (const ch of segment) out += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : escapeRegex(ch);
  return out;
}

/**
 * A matcher for a canonical pattern: true when the pattern covers `path`
 * (a `/`-separated path relative to the root, as git prints it).
 */
export function compilePattern(pattern: string): (path: string) => boolean {
  if (isLiteralPattern(pattern)) {
    const dir = `${pattern}/`;
    return (path) => path === pattern || path.startsWith(dir);
  }
  const segments = pattern.split('/');
  let source = '';
  let needSlash = false;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === GLOBSTAR) {
      // Zero or more whole segments; at the end it is absorbed by the "or below" suffix.
      if (last) source += i === 0 ? '.*' : '';
      else source += `${i === 0 ? '' : '/'}(?:[^/]+/)*`;
      needSlash = false;
      return;
    }
    source += `${needSlash ? '/' : ''}${segmentRegex(segment)}`;
    needSlash = true;
  });
  const regex = new RegExp(`^${source}${coversBelow(segments) ? '(?:/.*)?' : ''}$`, 's');
  return (path) => regex.test(path);
}

/** True when `pattern` covers `path`. Compile once with compilePattern when matching many paths. */
export function patternCovers(pattern: string, path: string): boolean {
  return compilePattern(pattern)(path);
}

/**
 * True when two segment globs (`*`, `?`, literals) match a common string.
 * A product of the two automata, searched depth first: a state is a
 * position in each glob; a `*` may be skipped or consume a character.
 */
function segmentsIntersect(a: readonly string[], b: readonly string[]): boolean {
  const seen = new Set<number>();
  const width = b.length + 1;
  const stack: [number, number][] = [[0, 0]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    const key = i * width + j;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === a.length && j === b.length) return true;
    const ca = a[i];
    const cb = b[j];
    if (ca === '*') stack.push([i + 1, j]);
    if (cb === '*') stack.push([i, j + 1]);
    if (ca !== undefined && cb !== undefined) {
      const wildA = ca === '*' || ca === '?';
      const wildB = cb === '*' || cb === '?';
      if (wildA || wildB || ca === cb) stack.push([ca === '*' ? i : i + 1, cb === '*' ? j : j + 1]);
    }
  }
  return false;
}

/**
 * True when some path is covered by both canonical patterns: two
 * reservations of them claim at least one common file. The same product
 * search as segmentsIntersect, one level up: segments are the symbols, `**`
 * loops, and a pattern that covers what is below its matches ends in an
 * implicit `**`. (segmentsIntersect lets a `*` match the empty string, which
 * no segment is; harmless: two globs that share "" consist of stars only
 * and so share "x" too.) A plain name may be a file or a directory, so
 * `docs/a` overlaps `docs/**\/index.md` (through `docs/a/index.md`).
 */
export function patternsOverlap(a: string, b: string): boolean {
  const withBelow = (pattern: string): string[] => {
    const segments = pattern.split('/');
    return coversBelow(segments) && segments.at(-1) !== GLOBSTAR ? [...segments, GLOBSTAR] : segments;
  };
  const sa = withBelow(a);
  const sb = withBelow(b);
  const chars = new Map<string, string[]>();
  const charsOf = (s: string): string[] => {
    let c = chars.get(s);
    if (c === undefined) chars.set(s, (c = Array.from(s)));
    return c;
  };
  const seen = new Set<number>();
  const width = sb.length + 1;
  const stack: [number, number][] = [[0, 0]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    const key = i * width + j;
    if (seen.has(key)) continue;
    seen.add(key);
    if (i === sa.length && j === sb.length) return true;
    const x = sa[i];
    const y = sb[j];
    if (x === GLOBSTAR) stack.push([i + 1, j]);
    if (y === GLOBSTAR) stack.push([i, j + 1]);
    if (x !== undefined && y !== undefined) {
      if (x === GLOBSTAR || y === GLOBSTAR || segmentsIntersect(charsOf(x), charsOf(y))) {
        stack.push([x === GLOBSTAR ? i : i + 1, y === GLOBSTAR ? j : j + 1]);
      }
    }
  }
  return false;
}
