import type { ChangeWaiter } from '../../bus/change-waiter.js';
import { receive, ReceiveInput, ReceiveOutput } from '../../bus/receive.js';
import type { ToolDefinition } from '../tool-definition.js';

/** receive waits through the process's one change waiter, woken by other processes' commits. */
export function receiveTool(waiter: ChangeWaiter): ToolDefinition {
  return {
    name: 'receive',
    description:
      'Agentbus: get new messages from your subscriptions. Pass the previous batch_token as `ack`, or the same batch comes again. wait_seconds long-polls until something arrives.',
    input: ReceiveInput,
    output: ReceiveOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (ctx, args, extra) =>
      receive(ctx, args, {
        signal: extra.signal,
        waiter,
        onProgress: (elapsedMs, totalMs) =>
          extra.progress(Math.round(elapsedMs / 1000), Math.round(totalMs / 1000), 'waiting for messages'),
      }),
  };
}
