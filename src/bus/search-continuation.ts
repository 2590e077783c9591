/**
 * Search continuation tokens: an offset into the ranking, which is
 * recomputed for every page, bound to the query and filters it came from so
 * a token cannot silently page through a different search. Opaque to
 * callers; base64url JSON inside.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './receipts.js';
import { invalid } from './validate.js';

interface TokenBody {
  /** Version. */
  v: 1;
  /** Offset of the next page's first result in the ranking. */
  o: number;
  /** Short hash of the query and filters. */
  h: string;
}

/** The hash binding a token to one search (query, mode and filters; count may change between pages). */
export function searchFingerprint(search: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(search)).digest('base64url').slice(0, 16);
}

export function encodeContinuation(offset: number, fingerprint: string): string {
  const body: TokenBody = { v: 1, o: offset, h: fingerprint };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/** The offset a token points at. Throws `validation` on `continuation` for a foreign, damaged or mismatched token. */
export function decodeContinuation(token: string, fingerprint: string): number {
  let body: Partial<TokenBody> | undefined;
  try {
    body = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<TokenBody>;
  } catch {
    body = undefined;
  }
  if (body === undefined || body === null || body.v !== 1 || typeof body.o !== 'number' || !Number.isSafeInteger(body.o) || body.o < 0) {
    throw invalid('continuation', 'is not a token a search returned; pass the continuation of the previous page unchanged, or omit it for the first page');
  }
  if (body.h !== fingerprint) {
    throw invalid(
      'continuation',
      'belongs to a different search; repeat the same query, mode and filters with it, or omit it to start a new search',
    );
  }
  return body.o;
}
