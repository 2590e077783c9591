import type { ChangeWaiter } from '../../bus/change-waiter.js';
import { receive, ReceiveInput, ReceiveOutput } from '../../bus/receive.js';
import type { InboxMonitor } from '../inbox-monitor.js';
import type { ToolDefinition } from '../tool-definition.js';

/**
 * receive waits through the process's one change waiter, woken by other
 * processes' commits; while it runs, nothing is pushed to the receiving name.
 */
export function receiveTool(waiter: ChangeWaiter, inbox?: Pick<InboxMonitor, 'enterReceive'>): ToolDefinition {
  return {
    name: 'receive',
    description:
      'Agentbus: get new messages from your subscriptions. Pass the previous batch_token as `ack`, or the same batch comes again. wait_seconds long-polls until something arrives.',
    input: ReceiveInput,
    output: ReceiveOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (ctx, args, extra) => {
      const as = (args as { as?: unknown } | null)?.as;
      const leave = typeof as === 'string' ? inbox?.enterReceive(as) : undefined;
      try {
        return await receive(ctx, args, {
          signal: extra.signal,
          waiter,
          onProgress: (elapsedMs, totalMs) =>
            extra.progress(Math.round(elapsedMs / 1000), Math.round(totalMs / 1000), 'waiting for messages'),
        });
      } finally {
        leave?.();
      }
    },
  };
}
