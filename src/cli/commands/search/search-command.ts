/**
 * `agentbus search QUERY`: the search tool's search (same validation, filters
 * and ranking: words by bm25, meaning when an embeddings endpoint is
 * configured, both fused), for a person, without registering.
 */
import { searchAsReader } from '../../../bus/search.js';
import { asCliError } from '../../bus-error-exit.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { messageLines, paletteFor, visibleText } from '../../message-line.js';
import { withReaderContext } from '../../reader-context.js';
import { parseSince } from '../../since-flag.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus search` takes (its spec.ts). */
export type SearchOptions = OptionsOf<typeof spec.options>;

function timeFlag(value: string | undefined, now: number): string | undefined {
  return value === undefined ? undefined : new Date(parseSince(value, now)).toISOString();
}

function intFlag(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new CliError('usage', `--${name} must be a whole number; got "${text}"`);
  return Number(text);
}

/** Runs `agentbus search`. */
export async function searchCommand(io: CliIo, args: readonly string[], options: SearchOptions): Promise<number> {
  const config = commandConfig(io, options);
  const query = args.join(' ');
  if (query.trim() === '') throw new CliError('usage', 'no query: agentbus search WORDS (e.g. agentbus search "flaky test")');
  const now = io.clock.now();
  const input: Record<string, unknown> = { query };
  for (const [flag, field] of [['mode', 'mode'], ['channel', 'channel'], ['sender', 'sender'], ['continuation', 'continuation']] as const) {
    const value = options[flag];
    if (value !== undefined) input[field] = value;
  }
  const since = timeFlag(options.since, now);
  const until = timeFlag(options.until, now);
  const thread = intFlag('thread', options.thread);
  const count = intFlag('count', options.count);
  if (options.direct) input.direct = true;
  Object.assign(input, since && { since }, until && { until }, thread !== undefined && { thread }, count !== undefined && { count });
  const result = await withReaderContext(config, io, 'search', (ctx) => asCliError(() => searchAsReader(ctx, input)));
  if (options.json) {
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
