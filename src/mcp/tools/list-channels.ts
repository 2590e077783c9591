import { listChannels, ListChannelsInput, ListChannelsOutput } from '../../bus/channels.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const listChannelsTool: ToolDefinition = {
  name: 'list_channels',
  description: 'Agentbus: list every channel with its kind, message count and latest seq.',
  input: ListChannelsInput,
  output: ListChannelsOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => listChannels(ctx, args),
};
