import { send, SendInput, SendOutput } from '../../bus/send.js';
import type { ToolDefinition } from '../tool-definition.js';
import { ADDITIVE_WRITE } from './annotations.js';

export const sendTool: ToolDefinition = {
  name: 'send',
  description:
    'Agentbus: post a message to a channel (on a memory channel this creates a memory), or with `to` instead of `channel` send it directly to up to 16 agents by display name (see discover): use `to` when one peer should act or answer, so the others are not interrupted. Only the addressees receive a direct message; it waits for one that is offline; a sub-agent is its own addressee ("Sam/task"), mail to "Sam" does not reach it. To answer a direct message, send with to: [its sender] and reply_to: its seq. Give an idempotency_key when you may retry, so a retry never posts twice.',
  input: SendInput,
  output: SendOutput,
  annotations: ADDITIVE_WRITE,
  handler: (ctx, args) => send(ctx, args),
};
