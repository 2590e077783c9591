import { send, SendInput, SendOutput } from '../../bus/send.js';
import type { ToolDefinition } from '../tool-definition.js';
import { ADDITIVE_WRITE } from './annotations.js';

export const sendTool: ToolDefinition = {
  name: 'send',
  description:
    'Agentbus: post a message to a channel (on a memory channel this creates a memory). Give an idempotency_key when you may retry, so a retry never posts twice.',
  input: SendInput,
  output: SendOutput,
  annotations: ADDITIVE_WRITE,
  handler: (ctx, args) => send(ctx, args),
};
