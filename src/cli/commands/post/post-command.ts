/**
 * `agentbus post`: a person's message to a channel, or with `--to NAME` a
 * direct message to agents (repeatable, up to 16 names), sent through the bus's own
 * send (the MCP tool's code path: validation, idempotency receipt, rate limit,
 * inspection hook, capacity), so agents receive it like any other message.
 * The process registers the name for the length of the send and releases it
 * afterwards, so the name is free again at once.
 */
import { send, type SendResult } from '../../../bus/send.js';
import type { Config } from '../../../config.js';
import { asCliError } from '../../bus-error-exit.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { humanName } from '../../human-name.js';
import { withPersonContext } from '../../person-context.js';
import * as messages from './messages.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus post` takes (its spec.ts). */
export type PostOptions = OptionsOf<typeof spec.options>;

async function readText(io: CliIo, given: string | undefined): Promise<string> {
  if (given !== undefined && given !== '-') return given;
  if (io.stdinIsTty && given === undefined) {
    throw new CliError('usage', messages.NO_TEXT);
  }
  let text = '';
  for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  // One trailing newline is the shell's (echo, a heredoc), not the message's.
  return text.replace(/\r?\n$/, '');
}

function replyTo(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1) throw new CliError('usage', messages.badReplyTo(text));
  return Number(text);
}

/** Sends as `name` with a context of its own; registers, sends, releases. */
export async function postMessage(
  config: Config,
  io: CliIo,
  message: { name: string; content: string; replyTo?: number; idempotencyKey?: string } & ({ channel: string } | { to: readonly string[] }),
): Promise<SendResult & { as: string }> {
  return withPersonContext(config, io, message.name, async (ctx, as) => {
    const result = await asCliError(() =>
      send(ctx, {
        as,
        ...('to' in message ? { to: message.to } : { channel: message.channel }),
        content: message.content,
        ...(message.replyTo === undefined ? {} : { reply_to: message.replyTo }),
        ...(message.idempotencyKey === undefined ? {} : { idempotency_key: message.idempotencyKey }),
      }),
    );
    return { ...result, as };
  });
}

/** The addressees of --to (repeatable), or undefined when none is given. */
function addressees(to: readonly string[]): string[] | undefined {
  return to.length === 0 ? undefined : [...to];
}

/** Runs `agentbus post CHANNEL [TEXT]` or `agentbus post --to NAME [TEXT]`. */
export async function postCommand(io: CliIo, args: readonly string[], options: PostOptions): Promise<number> {
  const config = commandConfig(io, options);
  const to = addressees(options.to);
  const [channel, given] = to === undefined ? args : [undefined, ...args];
  if (to !== undefined && args.length > 1) {
    throw new CliError('usage', messages.channelAndNames(to[0] as string, args[0] as string));
  }
  if (to === undefined && channel === undefined) throw new CliError('usage', messages.NO_CHANNEL);
  const reply = replyTo(options['reply-to']);
  const name = options.as ?? humanName(io);
  const content = await readText(io, given);
  const key = options['idempotency-key'];
  const result = await postMessage(config, io, {
    name,
    ...(to === undefined ? { channel: channel as string } : { to }),
    content,
    ...(reply === undefined ? {} : { replyTo: reply }),
    ...(key === undefined ? {} : { idempotencyKey: key }),
  });
  if (options.json) io.stdout.write(`${JSON.stringify(to === undefined ? { ...result, channel } : { ...result, to })}\n`);
  else if (to !== undefined) io.stdout.write(`${messages.sentDirect(result.seq, to, result.as)}\n`);
  else {
    const memory = result.memory_id === undefined ? undefined : { id: result.memory_id, revision: result.revision };
    io.stdout.write(`${messages.sentToChannel(result.seq, channel as string, result.as, memory)}\n`);
  }
  if (result.as !== name) io.stderr.write(`${messages.sentAsOther(name, result.as)}\n`);
  return 0;
}
