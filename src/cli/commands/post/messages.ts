/** What `agentbus post` tells the user: its usage errors and its report lines, in one place. */

export const NO_TEXT =
  'no text: give it after the channel (agentbus post general "hello", agentbus post --to Sam "hello") or pipe it on stdin, or pass - to type it';

export const badReplyTo = (text: string): string => `--reply-to must be the seq of a message (a whole number, e.g. 42); got "${text}"`;

/** --to with a channel-like first argument as well. */
export const channelAndNames = (firstName: string, channel: string): string =>
  `with --to, give only the text (agentbus post --to ${firstName} "hello"); "${channel}" would be a channel, and a message goes to a channel or to names, not both`;

export const NO_CHANNEL = 'no channel: agentbus post CHANNEL TEXT, or agentbus post --to NAME TEXT for a direct message';

export const sentDirect = (seq: number, to: readonly string[], as: string): string => `sent ${seq} to ${to.join(', ')} (direct) as ${as}`;

/** `memory` is the memory id and revision when the channel is a memory channel. */
export const sentToChannel = (seq: number, channel: string, as: string, memory: { id: number; revision: number | undefined } | undefined): string =>
  `sent ${seq} to #${channel} as ${as}${memory === undefined ? '' : ` (memory ${memory.id}, revision ${memory.revision})`}`;

/** The name asked for was held, so the bus gave another. */
export const sentAsOther = (name: string, as: string): string => `agentbus: "${name}" is held by a live session, so this was sent as "${as}"`;
