/**
 * Search continuation tokens: where the next page starts, bound to the query
 * and filters it came from so a token cannot silently page through a
 * different search. Opaque to callers; base64url JSON inside.
 *
 * A position is an offset into a ranking plus, for text and `both`, the
 * bound of the text window the ranking was built from
 * (search-text-window.ts): text pages read that window again, so newer
 * messages never shift a search already being paged.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './receipts.js';
import { invalid } from './validate.js';

/** Where a page starts. */
export interface SearchPosition {
  /** Offset of the page's first result in the ranking (for text: in the window). */
  readonly offset: number;
  /** The text window's bound (a seq, exclusive); undefined on a first page and for semantic search. */
  readonly bound: number | undefined;
}

interface TokenBody {
  /** Version. */
  v: 2;
  /** The position's offset. */
  o: number;
  /** The position's bound, when it has one. */
  b?: number;
  /** Short hash of the query and filters. */
  h: string;
}

/** The hash binding a token to one search (query, mode and filters; count may change between pages). */
export function searchFingerprint(search: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(search)).digest('base64url').slice(0, 16);
}

export function encodeContinuation(position: SearchPosition, fingerprint: string): string {
  const body: TokenBody = { v: 2, o: position.offset, ...(position.bound === undefined ? {} : { b: position.bound }), h: fingerprint };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/** The position a token points at. Throws `validation` on `continuation` for a foreign, damaged or mismatched token. */
export function decodeContinuation(token: string, fingerprint: string): SearchPosition {
  let body: Partial<TokenBody> | undefined;
  try {
    body = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<TokenBody>;
  } catch {
    body = undefined;
  }
  if (body === undefined || body === null || body.v !== 2 || !isCount(body.o) || (body.b !== undefined && !isCount(body.b))) {
    throw invalid('continuation', 'is not a token a search returned; pass the continuation of the previous page unchanged, or omit it for the first page');
  }
  if (body.h !== fingerprint) {
    throw invalid(
      'continuation',
      'belongs to a different search; repeat the same query, mode and filters with it, or omit it to start a new search',
    );
  }
  return { offset: body.o, bound: body.b };
}
