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
      'Agentbus: get new messages from your subscriptions and the direct messages sent to you (direct: true, with `to`), merged in seq order. Pass the previous batch_token as `ack`, or the same batch comes again. wait_seconds long-polls until something arrives. Ask and wait: send a question with `to`, then receive with reply_to: its seq and wait_seconds to get only the direct replies to it; everything else stays for your next plain receive.',
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
