/**
 * `agentbus search QUERY`: the search tool's search (same validation, filters
 * and ranking: words by bm25, meaning when an embeddings endpoint is
 * configured, both fused), for a person, without registering.
 */
import { searchAsReader } from '../../../bus/search.js';
import { asCliError } from '../../bus-error-exit.js';
import { commandConfig, flagSet } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { messageLines, paletteFor, visibleText } from '../../message-line.js';
import { withReaderContext } from '../../reader-context.js';
import { parseSince } from '../../since-flag.js';

function timeFlag(flags: Record<string, unknown>, name: string, now: number): string | undefined {
  return flags[name] === undefined ? undefined : new Date(parseSince(String(flags[name]), now)).toISOString();
}

function intFlag(flags: Record<string, unknown>, name: string): number | undefined {
  if (flags[name] === undefined) return undefined;
  const text = String(flags[name]);
  if (!/^\d{1,15}$/.test(text)) throw new CliError('usage', `--${name} must be a whole number; got "${text}"`);
  return Number(text);
}

/** Runs `agentbus search`. */
export async function searchCommand(io: CliIo, args: readonly string[], flags: Record<string, unknown>): Promise<number> {
  const config = commandConfig(io, flags);
  const query = args.join(' ');
  if (query.trim() === '') throw new CliError('usage', 'no query: agentbus search WORDS (e.g. agentbus search "flaky test")');
  const now = io.clock.now();
  const input: Record<string, unknown> = { query };
  for (const [flag, field] of [['mode', 'mode'], ['channel', 'channel'], ['sender', 'sender'], ['continuation', 'continuation']] as const) {
    if (flags[flag] !== undefined) input[field] = String(flags[flag]);
  }
  const since = timeFlag(flags, 'since', now);
  const until = timeFlag(flags, 'until', now);
  const thread = intFlag(flags, 'thread');
  const count = intFlag(flags, 'count');
  if (flagSet(flags, 'direct')) input.direct = true;
  Object.assign(input, since && { since }, until && { until }, thread !== undefined && { thread }, count !== undefined && { count });
  const result = await withReaderContext(config, io, 'search', (ctx) => asCliError(() => searchAsReader(ctx, input)));
  if (flagSet(flags, 'json')) {
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  }
  const palette = paletteFor(io.isTty, io.env);
  let out = '';
  for (const notice of result.notices) io.stderr.write(`agentbus: ${notice.kind}: ${visibleText(notice.message)}\n`);
  for (const hit of result.results) out += `${messageLines(hit, palette).join('\n')}\n${palette.dim(`    score ${hit.score.toPrecision(3)}`)}\n`;
  out += `${result.results.length} result${result.results.length === 1 ? '' : 's'} (${result.mode})\n`;
  if (result.continuation !== null) out += `more: add --continuation ${result.continuation}\n`;
  io.stdout.write(out);
  return 0;
}
