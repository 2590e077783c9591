/**
 * How a message looks in a terminal: one header line (time, channel or, for a
 * direct message, `direct → Kim, Lee`, seq, sender, and what it answers) and its text indented below. Message text comes
 * from agents and is untrusted: control characters (an escape sequence could
 * rewrite the terminal) are shown as visible `\x..` escapes, never sent raw.
 */
import type { Message } from '../bus/message-row.js';

/** ANSI colour, or nothing: only a terminal gets it, and never when NO_COLOR is set. */
export interface Palette {
  readonly dim: (s: string) => string;
  readonly bold: (s: string) => string;
  readonly channel: (s: string) => string;
  readonly sender: (s: string) => string;
}

const plain = (s: string): string => s;
const ansi = (code: string) => (s: string): string => `\u001b[${code}m${s}\u001b[0m`;

/** Colours when stdout is a terminal and NO_COLOR (https://no-color.org) is unset or empty. */
export function paletteFor(isTty: boolean, env: NodeJS.ProcessEnv): Palette {
  if (!isTty || (env.NO_COLOR !== undefined && env.NO_COLOR !== '')) return { dim: plain, bold: plain, channel: plain, sender: plain };
  return { dim: ansi('2'), bold: ansi('1'), channel: ansi('36'), sender: ansi('33') };
}

/** The text with every control character but newline and tab, and the bidi overrides, shown as escapes (`\x1b`, `\u{202e}`), so nothing in it drives or disguises the terminal. */
export function visibleText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** `2026-12-01 04:40:12` (UTC) from an ISO time. */
function shortTime(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/**
 * The lines for one message, indented by `depth` levels (replies shown under
 * their thread). The header names the reply target when there is one.
 */
export function messageLines(message: Message, palette: Palette, depth = 0): string[] {
  const indent = '  '.repeat(depth);
  const parts = [
    palette.dim(shortTime(message.created_at)),
    palette.channel(message.to === undefined ? `#${message.channel}` : `direct → ${message.to.map(visibleText).join(', ')}`),
    palette.dim(`[${message.seq}]`),
    palette.bold(palette.sender(visibleText(message.sender))),
  ];
  if (message.reply_to !== null) parts.push(palette.dim(`↳ re ${message.reply_to}`));
  if (message.memory_id !== undefined) parts.push(palette.dim(`memory ${message.memory_id} rev ${message.revision}`));
  if (message.type !== 'message' && message.type !== '') parts.push(palette.dim(`(${visibleText(message.type)})`));
  const body = visibleText(message.content)
    .split('\n')
    .map((line) => `${indent}    ${line}`);
  return [`${indent}${parts.join(' ')}`, ...body];
}

/**
 * Messages ordered as threads for display: each message whose reply_to is in
 * the list comes right after its parent's thread, one level deeper; the rest
 * stay in seq order at depth 0.
 */
export function threaded(messages: readonly Message[]): { message: Message; depth: number }[] {
  const bySeq = new Map(messages.map((m) => [m.seq, m]));
  const children = new Map<number, Message[]>();
  const roots: Message[] = [];
  for (const m of messages) {
    if (m.reply_to !== null && bySeq.has(m.reply_to) && m.reply_to !== m.seq) {
      const list = children.get(m.reply_to) ?? [];
      list.push(m);
      children.set(m.reply_to, list);
    } else roots.push(m);
  }
  const out: { message: Message; depth: number }[] = [];
  const visit = (m: Message, depth: number): void => {
    out.push({ message: m, depth });
    for (const child of children.get(m.seq) ?? []) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return out;
}
