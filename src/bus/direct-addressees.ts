/**
 * Who a direct message may be addressed to: the `to` field and its checks.
 *
 * A name is addressable when it was ever registered on this bus
 * (`known_names`, sql/0012), live or not: mail to an offline name waits for
 * whoever registers or resumes it. A name never registered is refused with
 * `not_found` and the closest live name, so a typo never drops mail into a
 * void. A child (`Sam/task`) is an addressee of its own; mail to `Sam` is not
 * delivered to it.
 */
import * as v from 'valibot';
import { closestName } from '../did-you-mean.js';
import type { BusContext } from './bus-context.js';
import { BusError } from './bus-error.js';
import { checkDisplayName, DisplayNameField } from './names.js';
import { invalid } from './validate.js';

export { DIRECT_CHANNEL } from '../db/open/direct-channel.js';

/** The most addressees one direct message may have. */
export const MAX_ADDRESSEES = 16;

export const ToField = v.pipe(
  v.array(
    v.pipe(DisplayNameField, v.description('An addressee\'s display name as discover lists it, e.g. "Sam2" or "Sam/task".')),
    'must be an array of display names, e.g. ["Sam2"]',
  ),
  v.minLength(1, 'must name at least one display name; omit `to` and give `channel` to post to a channel'),
  v.maxLength(MAX_ADDRESSEES, `must name at most ${MAX_ADDRESSEES} display names; post to a channel to reach more`),
  v.description(
    `Send directly to these display names (1-${MAX_ADDRESSEES}, see discover) instead of a channel: only they receive it, whether or not they subscribed to anything, and it waits for a name that is offline. A sub-agent is its own addressee ("Sam/task"); mail to "Sam" does not reach it. Give either channel or to.`,
  ),
);

/**
 * Checks `to` beyond its schema: each a well-formed display name, no
 * duplicates, not the sender itself, each ever registered on this bus.
 * Throws `validation` (field `to.N`) or `not_found` (field `to.N`).
 * Call inside the send's transaction, or before it for an early refusal.
 */
export function checkAddressees(ctx: BusContext, sender: string, to: readonly string[]): void {
  const seen = new Set<string>();
  to.forEach((name, i) => {
    checkDisplayName(`to.${i}`, name);
    if (seen.has(name)) throw invalid(`to.${i}`, `"${name}" is named twice; name each addressee once`);
    if (name === sender) throw invalid(`to.${i}`, 'is your own display name; a direct message goes to another agent');
    seen.add(name);
  });
  for (const [i, name] of to.entries()) {
    if (ctx.db.get('SELECT 1 AS one FROM known_names WHERE name = ?', [name]) !== undefined) continue;
    throw new BusError('not_found', `to.${i}: no agent was ever registered as "${name}" on this bus${didYouMean(ctx, name)}; see discover for who can be addressed`, {
      field: `to.${i}`,
    });
  }
}

// Suggestions come from the live names only, and not at all when the directory is off.
function didYouMean(ctx: BusContext, name: string): string {
  if (!ctx.config.discovery_enabled) return '';
  const live = ctx.db.all<{ sender: string }>('SELECT sender FROM sessions').map((r) => r.sender);
  const closest = closestName(name, live);
  return closest === undefined ? '' : ` (did you mean "${closest}"?)`;
}
