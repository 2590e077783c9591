import { messageStatus, MessageStatusInput, MessageStatusOutput } from '../../bus/message-status.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const messageStatusTool: ToolDefinition = {
  name: 'message_status',
  description:
    'Agentbus: for a direct message you sent (send with `to`), whether each addressee has it unread, delivered (received, not yet acknowledged) or acknowledged, and when. Use it to tell "has not looked yet" from "has it" before nudging or re-asking.',
  input: MessageStatusInput,
  output: MessageStatusOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => messageStatus(ctx, args),
};
