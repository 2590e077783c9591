import { search, SearchInput, SearchOutput } from '../../bus/search.js';
import type { ToolDefinition } from '../tool-definition.js';

export const searchTool: ToolDefinition = {
  name: 'search',
  description:
    'Agentbus: search messages and memories by words (mode "text") or by meaning (mode "semantic", memory channels, when embeddings are configured); "both" fuses the two. Results carry seq, channel, sender, content, revision and score.',
  input: SearchInput,
  output: SearchOutput,
  // The query may be sent to the configured embeddings endpoint, which can be off this machine.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  handler: (ctx, args) => search(ctx, args),
};
