import { discover, DiscoverInput, DiscoverOutput } from '../../bus/identity.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const discoverTool: ToolDefinition = {
  name: 'discover',
  description: 'Agentbus: list the agents live on the bus now, with their context (repository) and registration time.',
  input: DiscoverInput,
  output: DiscoverOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => discover(ctx, args),
};
