/**
 * Which plain-name patterns name files. A plain name (`src/a.ts`, `src/cli`)
 * could be a file or a directory, and a directory covers what is below it;
 * taken as possibly both, one agent's `**\/*.md` would conflict with every
 * single-file claim. So reserve asks the worktree the pattern was given for:
 * a name git tracks as a file (its index holds a blob there) or a regular
 * file present in the worktree is a file, and covers only itself
 * (compilePattern's `file`). Anything else (a directory, a name not yet
 * created, a submodule) keeps covering what is below it.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { isLiteralPattern } from './reservations-patterns.js';

/** The canonical `patterns` that are plain names of files in the worktree at `root`. Runs git once: call outside transactions. */
export function filePatterns(root: string, patterns: readonly string[], env: NodeJS.ProcessEnv): Set<string> {
  const plain = patterns.filter(isLiteralPattern);
  const files = new Set<string>();
  if (plain.length === 0) return files;
  for (const p of plain) if (lstatSync(join(root, p), { throwIfNoEntry: false })?.isFile() === true) files.add(p);
  const unknown = plain.filter((p) => !files.has(p));
  if (unknown.length === 0) return files;
  let out: string;
  try {
    // `:<path>` is the index entry at stage 0: a blob for a tracked file, missing for a directory (the index holds no trees).
    out = execFileSync('git', ['cat-file', '--batch-check=%(objecttype)'], {
      cwd: root,
      env,
      encoding: 'utf8',
      input: unknown.map((p) => `:${p}\n`).join(''),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch {
    // git could not answer: the names stay possible directories, which only ever refuses more.
    return files;
  }
  out.split('\n').forEach((line, i) => {
    const p = unknown[i];
    if (p !== undefined && line.trim() === 'blob') files.add(p);
  });
  return files;
}
