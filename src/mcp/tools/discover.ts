import { discover, DiscoverInput, DiscoverOutput } from '../../bus/identity.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const discoverTool: ToolDefinition = {
  name: 'discover',
  description:
    'Agentbus: list who can be addressed with send `to`: the agents live on the bus now (context = repository, registration time) and, under `offline`, names registered before that are not live now (a direct message waits for them).',
  input: DiscoverInput,
  output: DiscoverOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => discover(ctx, args),
};
