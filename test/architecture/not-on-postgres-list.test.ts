/**
 * The postgres project's exclusions (test/postgres/not-on-postgres.ts) stay
 * an honest list: every entry names files that exist, no file is excluded
 * twice (a stale entry would hide that its twin was removed), and every
 * reason says which kind it is, so the pending part reads as a to-do list.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { NOT_ON_POSTGRES } from '../postgres/not-on-postgres.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const testFiles = readdirSync(join(root, 'test'), { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
  .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));

/** The globs the list uses (`**` for any folders, `*` within one name) as a regular expression. */
function globPattern(glob: string): RegExp {
  const source = glob
    .split('**')
    .map((part) => part.split('*').map((text) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*'))
    .join('.*');
  return new RegExp(`^${source}$`);
}

const matched = NOT_ON_POSTGRES.map((entry) => ({ entry, files: testFiles.filter((file) => globPattern(entry.files).test(file)) }));

describe('the files the postgres project does not run', () => {
  it('every entry names test files that exist', () => {
    expect(matched.filter((m) => m.files.length === 0).map((m) => m.entry.files)).toEqual([]);
  });

  it('no test file is excluded by two entries', () => {
    const seen = matched.flatMap((m) => m.files);
    expect(seen.filter((file, at) => seen.indexOf(file) !== at)).toEqual([]);
  });

  it('every reason is "SQLite file only: ..." or "pending: ..."', () => {
    expect(NOT_ON_POSTGRES.filter((entry) => !/^(SQLite file only|pending): \S/.test(entry.reason)).map((e) => e.files)).toEqual([]);
  });
});
