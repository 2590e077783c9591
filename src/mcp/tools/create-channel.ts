import { createChannel, CreateChannelInput, CreateChannelOutput } from '../../bus/channels.js';
import type { ToolDefinition } from '../tool-definition.js';
import { IDEMPOTENT_WRITE } from './annotations.js';

export const createChannelTool: ToolDefinition = {
  name: 'create_channel',
  description:
    'Agentbus: create a channel, kind "ordinary" (messages) or "memory" (shared, editable memories). Creating an existing channel of the same kind is a no-op.',
  input: CreateChannelInput,
  output: CreateChannelOutput,
  annotations: IDEMPOTENT_WRITE,
  handler: (ctx, args) => createChannel(ctx, args),
};
