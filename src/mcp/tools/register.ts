import { register, RegisterInput, RegisterOutput } from '../../bus/identity.js';
import type { ToolDefinition } from '../tool-definition.js';
import { IDEMPOTENT_WRITE } from './annotations.js';

export const registerTool: ToolDefinition = {
  name: 'register',
  description:
    'Agentbus: register under a display name before anything else; pass the returned display_name as `as` on every other call. A taken name gets a numeric suffix; resume (default true) keeps your subscriptions. Then subscribe to the channels you need (general, memory) that the result\'s subscriptions do not list. direct_pending counts direct messages waiting for you: receive gets them, subscribed or not.',
  input: RegisterInput,
  output: RegisterOutput,
  annotations: IDEMPOTENT_WRITE,
  handler: (ctx, args) => register(ctx, args),
};
