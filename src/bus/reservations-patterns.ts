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
  return !WILD.test(pattern);
}

const WILD = /[*?]/;

/** One segment of a compiled pattern. */
interface Segment {
  /** The segment text (`**` for the globstar). */
  readonly text: string;
  /** True for `**`. */
  readonly globstar: boolean;
  /** True when the segment has `*` or `?` (false for `**`, which is handled as a symbol of its own). */
  readonly wild: boolean;
  /** The segment's characters (code points), for intersections. */
  readonly chars: readonly string[];
  /** The segment as an anchored regex, for a wild segment. */
  readonly regex: RegExp | undefined;
}

/** A canonical pattern ready to match paths and meet other patterns; compile once, use many times. */
export interface CompiledPattern {
  /** The canonical pattern text. */
  readonly text: string;
  /** True when it has no wildcard: it names one file or directory (and covers what is below it). */
  readonly literal: boolean;
  /** True when it is a plain name known to name a file: it covers only that file, nothing below it. */
  readonly file: boolean;
  /** Its leading segments without wildcards: every path it covers starts with them. */
  readonly prefix: readonly string[];
  /** Its segments, ending in an implicit `**` when it covers what is below its matches (built on first use). */
  readonly symbols: readonly Segment[];
  /** True when the pattern covers `path` (`/`-separated, relative to the root, as git prints it). */
  covers(path: string): boolean;
}

/** True when the pattern covers what is below the paths it matches: its last segment is a plain name, or `**`. */
function coversBelow(segments: readonly string[]): boolean {
  const last = segments.at(-1) ?? '';
  return last === GLOBSTAR || !WILD.test(last);
}

const escapeRegex = (text: string): string => text.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');

function segmentRegex(segment: string): string {
  let out = '';
  for (const ch of segment) out += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : escapeRegex(ch);
  return out;
}

function symbolOf(text: string): Segment {
  const globstar = text === GLOBSTAR;
  const wild = !globstar && WILD.test(text);
  return { text, globstar, wild, chars: Array.from(text), regex: wild ? new RegExp(`^${segmentRegex(text)}$`, 's') : undefined };
}

function pathRegex(segments: readonly string[]): RegExp {
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
  return new RegExp(`^${source}${coversBelow(segments) ? '(?:/.*)?' : ''}$`, 's');
}

/**
 * Compiles a canonical pattern (checkPattern's output). Cheap: regexes and
 * segment tables are built on first use, since most patterns the guard
 * files are never met by a path. `file`: the pattern is a plain name known
 * to name a file (ignored for a pattern with wildcards); otherwise a plain
 * name may be a directory and covers what is below it.
 */
export function compilePattern(pattern: string, options: { readonly file?: boolean } = {}): CompiledPattern {
  const segments = pattern.split('/');
  const literal = !WILD.test(pattern);
  const file = literal && options.file === true;
  const firstWild = literal ? -1 : segments.findIndex((s) => WILD.test(s));
  const prefix = firstWild === -1 ? segments : segments.slice(0, firstWild);
  let symbols: readonly Segment[] | undefined;
  let regex: RegExp | undefined;
  const dir = `${pattern}/`;
  return {
    text: pattern,
    literal,
    file,
    prefix,
    get symbols() {
      symbols ??= (!file && coversBelow(segments) && segments.at(-1) !== GLOBSTAR ? [...segments, GLOBSTAR] : segments).map(symbolOf);
      return symbols;
    },
    covers: literal
      ? (path) => path === pattern || (!file && path.startsWith(dir))
      : (path) => (regex ??= pathRegex(segments)).test(path),
  };
}

/** True when `pattern` covers `path`. Compile once with compilePattern when matching many paths. */
export function patternCovers(pattern: string, path: string): boolean {
  return compilePattern(pattern).covers(path);
}

/**
 * True when two segment globs (`*`, `?`, literals) match a common string.
 * A product of the two automata, searched depth first: a state is a
 * position in each glob; a `*` may be skipped or consume a character.
 */
function segmentsIntersect(x: Segment, y: Segment): boolean {
  if (!x.wild && !y.wild) return x.text === y.text;
  if (!x.wild) return y.regex!.test(x.text);
  if (!y.wild) return x.regex!.test(y.text);
  return sequencesIntersect(x.chars, y.chars, 0, isStar, charsMeet);
}

const isStar = (c: string): boolean => c === '*';
const charsMeet = (x: string, y: string): boolean => x === '*' || x === '?' || y === '*' || y === '?' || x === y;
const isGlobstar = (s: Segment): boolean => s.globstar;
const segmentsMeet = (x: Segment, y: Segment): boolean => x.globstar || y.globstar || segmentsIntersect(x, y);

/**
 * The product search both levels share: true when the two symbol sequences,
 * from position `from` in each, can be consumed to their ends together. A
 * state is a position in each; a `repeats` symbol (a `*` among characters, a
 * `**` among segments) may be skipped or stay while the other side moves
 * on; two symbols that `meet` can consume one step together. Depth first
 * over an explicit stack, each state seen once.
 */
function sequencesIntersect<T>(a: readonly T[], b: readonly T[], from: number, repeats: (t: T) => boolean, meet: (x: T, y: T) => boolean): boolean {
  const width = b.length + 1;
  const seen = new Uint8Array((a.length + 1) * width);
  const stack: number[] = [from, from];
  while (stack.length > 0) {
    const j = stack.pop()!;
    const i = stack.pop()!;
    const key = i * width + j;
    if (seen[key] === 1) continue;
    seen[key] = 1;
    if (i === a.length && j === b.length) return true;
    const x = a[i];
    const y = b[j];
    const xRepeats = x !== undefined && repeats(x);
    const yRepeats = y !== undefined && repeats(y);
    if (xRepeats) stack.push(i + 1, j);
    if (yRepeats) stack.push(i, j + 1);
    if (x !== undefined && y !== undefined && meet(x, y)) stack.push(xRepeats ? i : i + 1, yRepeats ? j : j + 1);
  }
  return false;
}

/**
 * True when some path is covered by both compiled patterns: two
 * reservations of them claim at least one common file. First the literal
 * prefixes (every covered path starts with them, so they must agree as far
 * as both go: two plain names overlap exactly when one is the other or a
 * directory above it); then the same product search as segmentsIntersect,
 * one level up: segments are the symbols and `**` loops. (segmentsIntersect
 * lets a `*` match the empty string, which no segment is; harmless: two
 * globs that share "" consist of stars only and so share "x" too.) A plain
 * name not known to be a file may be a directory, so `docs/a` overlaps
 * `docs/**\/index.md` (through `docs/a/index.md`); a known file covers only
 * itself, so `src/a.ts` (a file) does not overlap `**\/*.md`.
 */
export function compiledOverlap(a: CompiledPattern, b: CompiledPattern): boolean {
  const shared = Math.min(a.prefix.length, b.prefix.length);
  for (let k = 0; k < shared; k++) if (a.prefix[k] !== b.prefix[k]) return false;
  if (a.literal && b.literal) {
    // One is the other, or the shorter is above the longer: then it must be a directory.
    if (a.prefix.length === b.prefix.length) return true;
    return !(a.prefix.length < b.prefix.length ? a : b).file;
  }
  return sequencesIntersect(a.symbols, b.symbols, shared, isGlobstar, segmentsMeet);
}

/** True when some path is covered by both canonical patterns (compiledOverlap on freshly compiled ones). */
export function patternsOverlap(a: string, b: string): boolean {
  return compiledOverlap(compilePattern(a), compilePattern(b));
}
