/**
 * Name rules for identities and channels, and display-name allocation.
 *
 * Identity names (the `name` of register, and each `/`-separated part of a
 * display name) are 1–128 UTF-8 bytes with no control characters and no `/`.
 * A display name is the requested name with the first free numeric suffix
 * (`Sam`, `Sam2`, `Sam3`); a child's is `<parent display name>/<name>` with a
 * `-N` suffix (`Sam/task`, `Sam/task-2`). Display names are capped at
 * 1024 bytes so a deep chain of children stays bounded.
 *
 * Channel names are 1–128 ASCII characters from `A-Z a-z 0-9 . _ -`,
 * starting with a letter or digit: safe in any shell, file name or prompt,
 * and a byte is a character so the length rule is exact.
 */
import * as v from 'valibot';
import { invalid } from './validate.js';

export const NAME_MAX_BYTES = 128;
export const DISPLAY_NAME_MAX_BYTES = 1024;
export const CHANNEL_NAME_MAX = 128;

// C0 controls, DEL and C1 controls: invisible in a prompt, so never in a name.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The `name` field: a single identity name. Byte length is checked by `checkName`. */
export const NameField = v.pipe(
  v.string('must be a string: the name to register under, e.g. "Sam"'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(NAME_MAX_BYTES, `must be at most ${NAME_MAX_BYTES} UTF-8 bytes`),
  v.regex(/^[^/\u0000-\u001f\u007f-\u009f]+$/, 'must not contain "/" or control characters'),
);

/** A display name as register returned it (`as`, `parent`). Parts are checked by `checkDisplayName`. */
export const DisplayNameField = v.pipe(
  v.string('must be a string: the display name register returned'),
  v.minLength(1, 'must not be empty: pass the display name register returned'),
  v.maxLength(DISPLAY_NAME_MAX_BYTES, `must be at most ${DISPLAY_NAME_MAX_BYTES} characters`),
  v.regex(/^[^\u0000-\u001f\u007f-\u009f]+$/, 'must not contain control characters'),
);

/** A channel name. */
export const ChannelNameField = v.pipe(
  v.string('must be a string: a channel name such as "general"'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(CHANNEL_NAME_MAX, `must be at most ${CHANNEL_NAME_MAX} characters`),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
    'must start with a letter or digit and use only letters, digits, ".", "_" and "-" (e.g. "general")',
  ),
);

const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Throws `validation` on `field` unless `name` is a valid identity name. */
export function checkName(field: string, name: string): void {
  const bytes = byteLength(name);
  if (bytes < 1 || bytes > NAME_MAX_BYTES) throw invalid(field, `must be 1–${NAME_MAX_BYTES} UTF-8 bytes (got ${bytes})`);
  if (CONTROL.test(name)) throw invalid(field, 'must not contain control characters');
  if (name.includes('/')) throw invalid(field, 'must not contain "/"; give a child name with `parent` instead');
}

/**
 * Throws `validation` on `field` unless `displayName` could have come from
 * register: non-empty parts between `/`, no control characters, at most
 * DISPLAY_NAME_MAX_BYTES. (A suffixed part may exceed NAME_MAX_BYTES by its suffix.)
 */
export function checkDisplayName(field: string, displayName: string): void {
  const bytes = byteLength(displayName);
  if (bytes > DISPLAY_NAME_MAX_BYTES) {
    throw invalid(field, `must be at most ${DISPLAY_NAME_MAX_BYTES} UTF-8 bytes (got ${bytes})`);
  }
  if (CONTROL.test(displayName)) throw invalid(field, 'must not contain control characters');
  if (displayName.split('/').some((part) => part === '')) {
    throw invalid(field, 'has an empty part between "/"; pass a display name register returned');
  }
}

/** Channel names are ASCII, so the schema's character rule is the whole rule. */
export function isChannelName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) && name.length <= CHANNEL_NAME_MAX;
}

/** The base display name before any suffix: the name itself, or `parent/name` for a child. */
export function baseDisplayName(name: string, parent: string | undefined): string {
  return parent === undefined ? name : `${parent}/${name}`;
}

/**
 * The `n`th candidate display name (n >= 1): n = 1 is the base itself;
 * then `Sam2`, `Sam3` for a top-level name and `Sam/task-2` for a child.
 */
export function candidateDisplayName(base: string, isChild: boolean, n: number): string {
  if (n <= 1) return base;
  return isChild ? `${base}-${n}` : `${base}${n}`;
}

/** True when `displayName` is `base` or one of its suffixed candidates. */
export function isCandidateOf(displayName: string, base: string, isChild: boolean): boolean {
  if (displayName === base) return true;
  if (!displayName.startsWith(base)) return false;
  const rest = displayName.slice(base.length);
  const m = isChild ? /^-([0-9]+)$/.exec(rest) : /^([0-9]+)$/.exec(rest);
  return m !== null && !m[1]!.startsWith('0') && Number(m[1]) >= 2;
}

/**
 * True when display names `a` and `b` are one line of descent: the same name,
 * or one a parent (or grandparent) of the other (`Sam` and `Sam/task`). A
 * parent's file reservations cover the work its children do for it, and a
 * child's are its parent's: neither conflicts with the other, and the commit
 * guard lets either commit on either's claims. Siblings are not one line.
 */
export function sameLineage(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}
