import { getMemory, GetMemoryInput, GetMemoryOutput } from '../../bus/memories.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const getMemoryTool: ToolDefinition = {
  name: 'get_memory',
  description: 'Agentbus: read the current revision of a memory by its memory_id.',
  input: GetMemoryInput,
  output: GetMemoryOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => getMemory(ctx, args),
};
