import { unsubscribe, UnsubscribeInput, UnsubscribeOutput } from '../../bus/channels.js';
import type { ToolDefinition } from '../tool-definition.js';

export const unsubscribeTool: ToolDefinition = {
  name: 'unsubscribe',
  description: 'Agentbus: unsubscribe from a channel, dropping your cursor and any unacknowledged batch from it.',
  input: UnsubscribeInput,
  output: UnsubscribeOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: (ctx, args) => unsubscribe(ctx, args),
};
