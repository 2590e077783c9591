/**
 * Functions stay short (the project's quality bar, issue 25 item 4): every
 * function, method, accessor, constructor and arrow function in src/ and
 * drivers/ whose body spans more than MAX_LINES lines carries, directly above
 * it, a comment (JSDoc or // lines) that says why it is long, with the word
 * "long" (or "longer") in it. The files are parsed with the TypeScript compiler, so a body
 * is measured from its `{` to its `}`, whatever the formatting.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The most lines a body may span without a reason written above it. */
const MAX_LINES = 60;

/**
 * Long functions in files another branch is changing at the same time, as
 * `file:function`: they are taken apart (or given their reason) there, and
 * leave this list when that lands. Keep it short; nothing else goes here.
 */
const BEING_CHANGED_ELSEWHERE: ReadonlyMap<string, string> = new Map([
  ['drivers/postgres/pg-sql-text.ts:translate', 'being changed on another branch'],
]);

/** One function body over the limit. */
interface LongFunction {
  /** Repository path and 1-based line of the function's first line. */
  readonly at: string;
  /** `file:name`, the key of BEING_CHANGED_ELSEWHERE. */
  readonly key: string;
  /** Lines its body spans. */
  readonly lines: number;
  /** Whether the comment directly above it says why it is long. */
  readonly explained: boolean;
}

function sourceFiles(): string[] {
  return ['src', 'drivers'].flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      .map((e) => relative(root, join(e.parentPath, e.name))),
  );
}

/** The name a person would look for: the function's own, else what it is assigned to or passed to. */
function nameOf(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(file);
  const parent = node.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined) {
    return parent.name.getText(file);
  }
  if (ts.isCallExpression(parent)) return `${parent.expression.getText(file)} callback`;
  return 'anonymous function';
}

/** The comment block ending on the line directly above `line` (0-based), or '' when that line is no comment's end. */
function commentAbove(lines: readonly string[], line: number): string {
  let i = line - 1;
  const last = (lines[i] ?? '').trim();
  if (last.startsWith('//')) {
    const block: string[] = [];
    while (i >= 0 && (lines[i] as string).trim().startsWith('//')) block.unshift(lines[i--] as string);
    return block.join('\n');
  }
  if (!last.endsWith('*/')) return '';
  const block: string[] = [];
  while (i >= 0) {
    block.unshift(lines[i] as string);
    if ((lines[i] as string).includes('/*')) break;
    i--;
  }
  return block.join('\n');
}

function longFunctions(path: string): LongFunction[] {
  const text = readFileSync(join(root, path), 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines = text.split('\n');
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined && ts.isBlock(node.body)) {
      const fn = node as ts.FunctionLikeDeclaration;
      const body = fn.body as ts.Block;
      const first = file.getLineAndCharacterOfPosition(body.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(body.getEnd()).line;
      const length = last - first + 1;
      if (length > MAX_LINES) {
        const start = file.getLineAndCharacterOfPosition(fn.getStart(file)).line;
        const name = nameOf(fn, file);
        found.push({ at: `${path}:${start + 1}`, key: `${path}:${name}`, lines: length, explained: /\blong(er)?\b/i.test(commentAbove(lines, start)) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('function length (no body over 60 lines without a reason above it)', () => {
  const all = sourceFiles().flatMap(longFunctions);

  it('measures something', () => {
    expect(sourceFiles().length).toBeGreaterThan(100);
  });

  it('every long function says why it is long, directly above it', () => {
    const unexplained = all
      .filter((f) => !f.explained && !BEING_CHANGED_ELSEWHERE.has(f.key))
      .map((f) => `${f.at} ${f.key.slice(f.key.lastIndexOf(':') + 1)}: ${f.lines} lines, no comment above saying why it is long`);
    expect(unexplained).toEqual([]);
  });

  it('the allow-list names only functions that are still long and unexplained', () => {
    const stale = [...BEING_CHANGED_ELSEWHERE.keys()].filter((key) => !all.some((f) => f.key === key && !f.explained));
    expect(stale).toEqual([]);
  });
});
