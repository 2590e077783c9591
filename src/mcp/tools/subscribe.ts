import { subscribe, SubscribeInput, SubscribeOutput } from '../../bus/channels.js';
import type { ToolDefinition } from '../tool-definition.js';
import { IDEMPOTENT_WRITE } from './annotations.js';

export const subscribeTool: ToolDefinition = {
  name: 'subscribe',
  description:
    'Agentbus: subscribe to a channel so receive delivers its messages; from "now" (default) or "oldest". Your cursor survives restarts under the same name.',
  input: SubscribeInput,
  output: SubscribeOutput,
  annotations: IDEMPOTENT_WRITE,
  handler: (ctx, args) => subscribe(ctx, args),
};
