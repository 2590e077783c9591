import { editMemory, EditMemoryInput, EditMemoryOutput } from '../../bus/memories.js';
import type { ToolDefinition } from '../tool-definition.js';

export const editMemoryTool: ToolDefinition = {
  name: 'edit_memory',
  description:
    'Agentbus: replace a memory\'s content with a new revision; the last write wins and the result names the revision you replaced.',
  input: EditMemoryInput,
  output: EditMemoryOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  handler: (ctx, args) => editMemory(ctx, args),
};
