import { deleteMemory, DeleteMemoryInput, DeleteMemoryOutput } from '../../bus/memories.js';
import type { ToolDefinition } from '../tool-definition.js';

export const deleteMemoryTool: ToolDefinition = {
  name: 'delete_memory',
  description: 'Agentbus: delete a memory (its current revision is tombstoned; get_memory then says not_found).',
  input: DeleteMemoryInput,
  output: DeleteMemoryOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: (ctx, args) => deleteMemory(ctx, args),
};
