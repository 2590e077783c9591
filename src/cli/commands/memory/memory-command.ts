/**
 * `agentbus memory [list | show ID | history ID]`: the shared memories, for a
 * person, without registering. show is get_memory's answer; history lists
 * every stored revision, the live one marked.
 */
import { listMemories, memoryHistory, showMemory } from '../../../bus/memory-listing.js';
import { asCliError } from '../../bus-error-exit.js';
import { commandConfig } from '../../cli-config.js';
import { CliError } from '../../cli-error.js';
import type { CliIo } from '../../cli-io.js';
import { messageLines, paletteFor } from '../../message-line.js';
import { withReaderContext } from '../../reader-context.js';
import type { OptionsOf } from '../../command-spec.js';
import type { spec } from './spec.js';

/** The options `agentbus memory` takes (its spec.ts). */
export type MemoryOptions = OptionsOf<typeof spec.options>;

const ACTIONS = ['list', 'show', 'history'] as const;
const LIST_DEFAULT = 100;

function memoryId(action: string, value: string | undefined): number {
  if (value === undefined) throw new CliError('usage', `agentbus memory ${action} needs a memory ID (e.g. agentbus memory ${action} 42; agentbus memory list shows them)`);
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new CliError('usage', `the memory ID must be a whole number such as 42; got "${value}"`);
  return Number(value);
}

/** Runs `agentbus memory`. */
export async function memoryCommand(io: CliIo, args: readonly string[], options: MemoryOptions): Promise<number> {
  const config = commandConfig(io, options);
  const [action = 'list', id] = args;
  if (!(ACTIONS as readonly string[]).includes(action)) throw new CliError('usage', `unknown action "${action}": use agentbus memory list, memory show ID or memory history ID`);
  if (action === 'list' && id !== undefined) throw new CliError('usage', `agentbus memory list takes no ID; to read one, agentbus memory show ${id}`);
  const json = options.json;
  const palette = paletteFor(io.isTty, io.env);
  const limit = options.lines === undefined ? LIST_DEFAULT : Number(options.lines);
  if (!Number.isInteger(limit) || limit < 1) throw new CliError('usage', `--lines must be a whole number of at least 1; got "${options.lines}"`);
  const channel = options.channel;
  const messages = await withReaderContext(config, io, 'memory', (ctx) =>
    asCliError(() => {
      if (action === 'show') return [showMemory(ctx, memoryId(action, id))];
      if (action === 'history') return memoryHistory(ctx, memoryId(action, id));
      return listMemories(ctx, { limit, ...(channel === undefined ? {} : { channel }) });
    }),
  );
  let out = '';
  if (json) out = action === 'show' ? `${JSON.stringify(messages[0])}\n` : messages.map((m) => `${JSON.stringify(m)}\n`).join('');
  else {
    for (const m of messages) {
      const lines = messageLines(m, palette);
      if ('live' in m) lines[0] += m.live ? palette.bold(' (live)') : palette.dim(' (replaced or deleted)');
      out += `${lines.join('\n')}\n`;
    }
    if (action === 'list') out += `${messages.length} memor${messages.length === 1 ? 'y' : 'ies'}\n`;
  }
  io.stdout.write(out);
  return 0;
}
