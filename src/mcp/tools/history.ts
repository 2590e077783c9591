import { history, HistoryInput, HistoryOutput } from '../../bus/history.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const historyTool: ToolDefinition = {
  name: 'history',
  description: 'Agentbus: read a channel\'s messages (or with direct: true your direct messages, optionally `with` one agent) before or after a seq, without moving your cursor or marking anything read.',
  input: HistoryInput,
  output: HistoryOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => history(ctx, args),
};
