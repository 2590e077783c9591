import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1] as string);
}

describe('architecture boundaries', () => {
  it('only src/db/open/select-driver.ts imports drivers/', () => {
    const offenders = sourceFiles('src').filter(
      (f) => f !== 'src/db/open/select-driver.ts' && imports(f).some((i) => i.includes('/drivers/')),
    );
    expect(offenders).toEqual([]);
  });

  it('node:sqlite and @sqlite.org/sqlite-wasm are imported only inside their driver', () => {
    const all = [...sourceFiles('src'), ...sourceFiles('drivers')];
    const sqlite = all.filter((f) => imports(f).includes('node:sqlite') && !f.startsWith('drivers/native/'));
    const wasm = all.filter((f) => imports(f).some((i) => i.startsWith('@sqlite.org/sqlite-wasm')) && !f.startsWith('drivers/wasm/'));
    expect(sqlite).toEqual([]);
    expect(wasm).toEqual([]);
  });

  it('drivers depend on core only through src/db', () => {
    const offenders = sourceFiles('drivers').filter((f) =>
      imports(f).some((i) => i.startsWith('../../src/') && !i.startsWith('../../src/db/')),
    );
    expect(offenders).toEqual([]);
  });

  it('nothing but the CLI entry writes to process.stdout', () => {
    const offenders = sourceFiles('src').filter(
      (f) => !f.startsWith('src/cli/') && /process\.stdout\.write|console\.log/.test(readFileSync(join(root, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
