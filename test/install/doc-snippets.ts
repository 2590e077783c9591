/**
 * The snippets of docs/install.md: fenced blocks whose info string is
 * `<language> agentbus:<id>`, so the tests check exactly what people copy.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
export const INSTALL_DOC = `${REPO_ROOT}/docs/install.md`;
/** The placeholder the doc uses for the checkout's path. */
export const CHECKOUT_PLACEHOLDER = '/path/to/agentbus';

export interface Snippet {
  readonly id: string;
  readonly language: string;
  readonly text: string;
}

export function installSnippets(): Map<string, Snippet> {
  const doc = readFileSync(INSTALL_DOC, 'utf8');
  const snippets = new Map<string, Snippet>();
  const fence = /^```(\w+) agentbus:([\w-]+)\n([\s\S]*?)^```$/gm;
  for (const m of doc.matchAll(fence)) {
    const [, language = '', id = '', text = ''] = m;
    if (snippets.has(id)) throw new Error(`docs/install.md has two snippets named ${id}`);
    snippets.set(id, { id, language, text });
  }
  return snippets;
}

export function snippet(snippets: Map<string, Snippet>, id: string): Snippet {
  const found = snippets.get(id);
  if (found === undefined) throw new Error(`docs/install.md has no snippet agentbus:${id}`);
  return found;
}

/** The snippet with the checkout placeholder replaced by this checkout. */
export function localised(text: string): string {
  return text.split(CHECKOUT_PLACEHOLDER).join(REPO_ROOT);
}

/**
 * Parses the small TOML subset the doc uses: `[a.b]` tables, `key = value`
 * with basic strings, integers, booleans and arrays of strings, and comments.
 * Anything else throws, so the doc cannot drift into syntax this does not check.
 */
export function parseTomlSubset(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  let table = root;
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\]$/.exec(line);
    if (header !== null) {
      table = root;
      for (const part of (header[1] ?? '').split('.')) table = table[part] ??= {};
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+)\s*=\s*(.+)$/.exec(line);
    if (pair === null) throw new Error(`TOML line ${index + 1} is outside the checked subset: ${raw}`);
    const [, key = '', value = ''] = pair;
    if (key in table) throw new Error(`TOML key ${key} repeated on line ${index + 1}`);
    if (/^(true|false)$/.test(value)) table[key] = value === 'true';
    else if (/^-?\d+$/.test(value)) table[key] = Number(value);
    else if (/^"(?:[^"\\]|\\["\\nt])*"$/.test(value)) table[key] = JSON.parse(value);
    else if (/^\[\s*("(?:[^"\\]|\\["\\nt])*"\s*,\s*)*("(?:[^"\\]|\\["\\nt])*")?\s*\]$/.test(value)) table[key] = JSON.parse(value);
    else throw new Error(`TOML value on line ${index + 1} is outside the checked subset: ${value}`);
  }
  return root;
}

/** Splits a one-line shell command into words (plain words and double-quoted strings only). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? '');
  return words;
}
