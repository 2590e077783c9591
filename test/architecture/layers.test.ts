/**
 * The layer order of docs/architecture.md ("Layers"), enforced: every import
 * in src/ and drivers/ points at its own layer or one listed below it, and no
 * chain of imports comes back to the file it started from. The list is read
 * from the document, so the rule and its description cannot drift apart.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The two exceptions the document states below the list, each with its reason there. */
const EXCEPTIONS: readonly { readonly from: (file: string) => boolean; readonly to: (file: string) => boolean; readonly why: string }[] = [
  { from: (f) => f === 'src/db/open/select-driver.ts', to: (f) => f.startsWith('drivers/'), why: 'select-driver loads the driver that runs' },
  { from: (f) => f.startsWith('drivers/'), to: (f) => f.startsWith('src/db/'), why: 'a driver implements the contract of src/db/' },
];

/** The layers, top first: each a list of directory prefixes (ending in /) or files. */
function layers(): string[][] {
  const text = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const section = text.slice(text.indexOf('## Layers'));
  const block = section.slice(section.indexOf('```') + 3, section.indexOf('```', section.indexOf('```') + 3));
  return block
    .split('\n')
    .filter((line) => /^\S/.test(line))
    .map((line) => (line.split(/\s{2,}/)[0] as string).split(/,\s*/));
}

function sourceFiles(): string[] {
  return ['src', 'drivers'].flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => relative(root, join(e.parentPath, e.name))),
  );
}

/** The relative imports of `file` (static, dynamic and re-exports), as repository paths of .ts files. */
function imports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) =>
    relative(root, resolve(root, dirname(file), m[1] as string)).replace(/\.js$/, '.ts'),
  );
}

function layerOf(list: readonly string[][], file: string): number {
  return list.findIndex((entries) => entries.some((e) => (e.endsWith('/') ? file.startsWith(e) : file === e)));
}

describe('layer order (docs/architecture.md, "Layers")', () => {
  const list = layers();
  const files = sourceFiles();

  it('the document lists the layers', () => {
    expect(list.length).toBeGreaterThan(5);
  });

  it('every file of src/ and drivers/ belongs to a layer of the list', () => {
    expect(files.filter((f) => layerOf(list, f) < 0)).toEqual([]);
  });

  it('every import points at its own layer or one below it', () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(list, file);
      for (const target of imports(file)) {
        const to = layerOf(list, target);
        if (to >= from || EXCEPTIONS.some((x) => x.from(file) && x.to(target))) continue;
        violations.push(`${file} imports ${target}: ${list[to]?.join(', ')} is above ${list[from]?.join(', ')} in the layers, so it may not be imported from there`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('no chain of imports comes back to the file it started from', () => {
    const graph = new Map(files.map((f) => [f, imports(f).filter((t) => files.includes(t))]));
    const cycles: string[] = [];
    const done = new Set<string>();
    const visit = (file: string, path: string[]): void => {
      const at = path.indexOf(file);
      if (at >= 0) return void cycles.push([...path.slice(at), file].join(' -> '));
      if (done.has(file)) return;
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      done.add(file);
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
