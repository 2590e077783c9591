/**
 * The web console's request checks. Any local process, and any page the
 * user's browser visits, can reach 127.0.0.1: so every request must carry
 * the random token printed at start (query `token` or header
 * `X-Agentbus-Token`), name this server in Host (a DNS-rebinding page names
 * its own host), and, when the browser says where it comes from (Origin),
 * come from this server's own page. No CORS headers are ever sent.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Headers on every answer: a strict policy (own scripts, styles and connections only; no inline code, no frames, no forms elsewhere), no caching and no referrer (the token is in the URL). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** Why a request is refused; undefined when it may proceed. */
export interface Refusal {
  /** 403 for every refusal: the client learns nothing about which check failed beyond the reason text. */
  readonly status: 403;
  /** One line, for the client and the log. */
  readonly reason: string;
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The hosts this server answers to on `port`. */
export function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/** Checks Host, Origin and the token of `req` against the server listening on `port` with `token`. */
export function refusalOf(req: IncomingMessage, url: URL, port: number, token: string): Refusal | undefined {
  const hosts = allowedHosts(port);
  const host = (req.headers.host ?? '').toLowerCase();
  if (!hosts.includes(host)) return { status: 403, reason: `Host "${host}" is not this console (open http://127.0.0.1:${port}/ as printed)` };
  const origin = req.headers.origin;
  if (origin !== undefined && !hosts.some((h) => origin.toLowerCase() === `http://${h}`)) {
    return { status: 403, reason: `cross-site request from "${origin}" refused` };
  }
  const header = req.headers['x-agentbus-token'];
  const given = Array.isArray(header) ? header[0] : (header ?? url.searchParams.get('token'));
  if (!sameToken(given, token)) return { status: 403, reason: 'missing or wrong token: open the URL agentbus web printed, with its ?token=' };
  return undefined;
}
