import { describe, expect, it } from 'vitest';
import { PathIndex } from '../../src/bus/reservations-path-index.js';
import { checkPattern, compiledOverlap, compilePattern, patternCovers, patternsOverlap } from '../../src/bus/reservations-patterns.js';

const canonical = (raw: string): string => {
  const checked = checkPattern(raw);
  if (!checked.ok) throw new Error(`${raw}: ${checked.problem}`);
  return checked.pattern;
};
const problem = (raw: string): string => {
  const checked = checkPattern(raw);
  if (checked.ok) throw new Error(`${raw} was accepted as ${checked.pattern}`);
  return checked.problem;
};

describe('reservation patterns: what they cover', () => {
  const cases: [pattern: string, covered: string[], notCovered: string[]][] = [
    // A literal path is a file, or a directory with everything under it.
    ['src/cli/main.ts', ['src/cli/main.ts'], ['src/cli/main.tsx', 'src/cli/main', 'src/cli', 'src/cli/main.ts.bak']],
    ['src/cli', ['src/cli', 'src/cli/main.ts', 'src/cli/deep/a/b.ts'], ['src/clip.ts', 'src/cli2/x.ts', 'src', 'cli/x']],
    ['src/**', ['src', 'src/a.ts', 'src/cli/main.ts', 'src/a/b/c/d.ts'], ['srcs/a.ts', 'lib/src/a.ts', 'README.md']],
    // Patterns start at the root: *.md is a root file only.
    ['*.md', ['README.md', 'CHANGES.md', '.md'], ['docs/install.md', 'README.mdx', 'README.md.txt', 'notes.md/inside.txt']],
    ['**/*.md', ['README.md', 'docs/install.md', 'a/b/c/x.md'], ['README.mdx', 'docs/md']],
    ['docs/**/index.md', ['docs/index.md', 'docs/a/index.md', 'docs/a/b/index.md'], ['docs/a/index.mdx', 'index.md', 'docs/a/xindex.md']],
    // A wildcard in the last segment matches names at that level only.
    ['src/*', ['src/a.ts', 'src/cli'], ['src', 'lib/a.ts', 'src/cli/main.ts']],
    ['src/*.ts', ['src/a.ts'], ['src/cli/main.ts', 'src/a.ts/x']],
    // A plain last segment may be a directory: it covers what is below it.
    ['src/*/main.ts', ['src/cli/main.ts', 'src/x/main.ts/y'], ['src/main.ts', 'src/a/b/main.ts']],
    ['src/?.ts', ['src/a.ts', 'src/é.ts'], ['src/ab.ts', 'src/.ts']],
    ['**', ['a', 'a/b/c', 'README.md'], []],
    // Brackets and other punctuation are literal (Next.js routes, regex characters).
    ['pages/[id].tsx', ['pages/[id].tsx'], ['pages/i.tsx', 'pages/d.tsx']],
    ['a+b/(x).$', ['a+b/(x).$'], ['aab/(x).x', 'a+b/x']],
  ];
  for (const [pattern, covered, notCovered] of cases) {
    it(`${pattern}`, () => {
      const { covers } = compilePattern(canonical(pattern));
      for (const path of covered) expect(covers(path), `${pattern} covers ${path}`).toBe(true);
      for (const path of notCovered) expect(covers(path), `${pattern} does not cover ${path}`).toBe(false);
    });
  }

  it('is case-sensitive, as git is', () => {
    expect(patternCovers('README.md', 'readme.md')).toBe(false);
    expect(patternCovers('*.MD', 'README.md')).toBe(false);
  });
});

describe('reservation patterns: validation and canonical form', () => {
  it('drops one trailing slash (a directory) and collapses repeated **', () => {
    expect(canonical('src/cli/')).toBe('src/cli');
    expect(canonical('src/**/**/x.ts')).toBe('src/**/x.ts');
    expect(canonical('[id].tsx')).toBe('[id].tsx');
  });

  it('refuses patterns that could leave the root or mean something else, saying what to write', () => {
    expect(problem('/etc/passwd')).toMatch(/relative to the repository root.*"etc\/passwd"/);
    expect(problem('../other/x.ts')).toMatch(/"\." or "\.\." segments/);
    expect(problem('src/../../x')).toMatch(/"\." or "\.\." segments/);
    expect(problem('./src')).toMatch(/"\." or "\.\." segments/);
    expect(problem('src\\cli')).toMatch(/use "\/"/);
    expect(problem('src//cli')).toMatch(/empty segment/);
    expect(problem('src//')).toMatch(/empty segment/);
    expect(problem('')).toMatch(/must not be empty/);
    expect(problem('src/**.ts')).toMatch(/"\*\*" stands alone/);
    expect(problem('!src/x')).toMatch(/exclusions are not supported/);
    expect(problem('src/{a,b}.ts')).toMatch(/brace lists/);
    expect(problem('src/a\nb')).toMatch(/control characters/);
    expect(problem('x'.repeat(1025))).toMatch(/at most 1024/);
  });
});

describe('reservation patterns: overlap of two patterns', () => {
  const overlapping: [string, string][] = [
    ['src/cli/main.ts', 'src/cli/main.ts'],
    ['src/**', 'src/cli/main.ts'],
    ['src', 'src/cli/main.ts'],
    ['src/cli', 'src/*/main.ts'],
    ['*.md', 'README.md'],
    ['**/*.md', 'docs/install.md'],
    ['**/*.md', '*.md'],
    ['**/*.md', 'docs/**'],
    ['src/*.ts', 'src/a*'],
    ['src/a*.ts', 'src/*b.ts'],
    ['src/?.ts', 'src/a.*'],
    ['**', 'anything/at/all'],
    ['docs/**/index.md', 'docs/a/b/*'],
    ['a/*/c', 'a/b'],
    ['*', 'deep'],
    // A plain name may be a directory holding the other's match.
    ['docs/**/index.md', 'docs/a/readme.md'],
    ['**/*.md', 'src'],
  ];
  const disjoint: [string, string][] = [
    ['src/cli/main.ts', 'src/cli/mcp.ts'],
    ['src/cli', 'src/clip'],
    ['*.md', 'docs/install.md'],
    ['src/*.ts', 'src/*.js'],
    ['src/a*.ts', 'src/b*'],
    ['src/?.ts', 'src/ab.ts'],
    ['docs/**/index.md', 'docs/a/readme.mdx/*.txt'],
    ['a/*/c', 'a/b/d'],
    ['lib/**', 'src/**'],
    ['**/*.md', '**/*.ts'],
    ['src/*', 'src/cli/main.ts'],
    ['*', 'deep/down/file.ts'],
  ];
  for (const [a, b] of overlapping) {
    it(`${a} overlaps ${b}`, () => {
      expect(patternsOverlap(a, b)).toBe(true);
      expect(patternsOverlap(b, a)).toBe(true);
    });
  }
  for (const [a, b] of disjoint) {
    it(`${a} is disjoint from ${b}`, () => {
      expect(patternsOverlap(a, b)).toBe(false);
      expect(patternsOverlap(b, a)).toBe(false);
    });
  }

  it('agrees with the path matcher: a pattern that covers a path overlaps it', () => {
    const patterns = ['src/**', '*.md', '**/*.md', 'src/*', 'src/cli', 'docs/**/index.md', 'src/?.ts', 'a/*/c', '**'];
    const paths = ['src', 'src/a.ts', 'src/cli/main.ts', 'README.md', 'docs/index.md', 'docs/x/index.md', 'a/b/c', 'a/b/c/d', 'a/b', 'lib/x.md'];
    for (const p of patterns) {
      for (const path of paths) {
        if (patternCovers(p, path)) expect(patternsOverlap(p, path), `${p} vs ${path}`).toBe(true);
      }
    }
  });
});

describe('the path index the guard matches staged paths with', () => {
  it('finds for every path exactly the patterns that cover it, as matching each pattern in turn does', () => {
    const patterns = ['src/**', 'src', 'src/cli', 'src/cli/main.ts', 'src/*/main.ts', '*.md', '**/*.md', '**', 'docs/**/index.md', 'src/?.ts', 'a/*/c', 'lib/x', 'lib/x/y'];
    const paths = ['src', 'src/a.ts', 'src/cli/main.ts', 'src/cli/mcp.ts', 'README.md', 'docs/index.md', 'docs/x/index.md', 'a/b/c', 'a/b/c/d', 'lib/x/y/z.ts', 'lib/xy', 'other'];
    const index = new PathIndex<string>();
    for (const p of patterns) index.add(p, p);
    let found = 0;
    for (const path of paths) {
      const expected = patterns.filter((p) => patternCovers(p, path));
      expect([...index.covering(path)].sort(), path).toEqual([...expected].sort());
      found += expected.length;
    }
    expect(found).toBeGreaterThan(paths.length);
  });
});

describe('reservation patterns: plain names known to be files', () => {
  it('a file covers only itself: it meets globs matching it and directories above it, nothing else', () => {
    const file = (p: string) => compilePattern(p, { file: true });
    const maybeDir = (p: string) => compilePattern(p);
    expect(compiledOverlap(file('src/a.ts'), maybeDir('**/*.md'))).toBe(false);
    expect(compiledOverlap(maybeDir('src/a.ts'), maybeDir('**/*.md'))).toBe(true);
    expect(compiledOverlap(file('docs/a.md'), maybeDir('**/*.md'))).toBe(true);
    expect(compiledOverlap(file('src/a.ts'), maybeDir('src'))).toBe(true);
    expect(compiledOverlap(maybeDir('src'), file('src/a.ts'))).toBe(true);
    expect(compiledOverlap(file('src/a.ts'), maybeDir('src/a.ts/x'))).toBe(false);
    expect(compiledOverlap(file('src/a.ts'), file('src/a.ts'))).toBe(true);
    expect(compiledOverlap(file('src/a.ts'), maybeDir('src/**'))).toBe(true);
    expect(compiledOverlap(file('src/a.ts'), maybeDir('src/*/x'))).toBe(false);
    expect([file('src/a.ts').covers('src/a.ts'), file('src/a.ts').covers('src/a.ts/x')]).toEqual([true, false]);
    // Ignored for a pattern with wildcards.
    expect(compilePattern('src/*', { file: true }).file).toBe(false);
  });
});
