/** Every tool the server offers, in the order tools/list shows them. */
import type { ChangeWaiter } from '../../bus/change-waiter.js';
import type { InboxMonitor } from '../inbox-monitor.js';
import type { ToolDefinition } from '../tool-definition.js';
import { createChannelTool } from './create-channel.js';
import { deleteMemoryTool } from './delete-memory.js';
import { discoverTool } from './discover.js';
import { editMemoryTool } from './edit-memory.js';
import { getMemoryTool } from './get-memory.js';
import { historyTool } from './history.js';
import { listChannelsTool } from './list-channels.js';
import { listReservationsTool } from './list-reservations.js';
import { messageStatusTool } from './message-status.js';
import { receiveTool } from './receive.js';
import { registerTool } from './register.js';
import { releaseTool } from './release.js';
import { reserveTool } from './reserve.js';
import { searchTool } from './search.js';
import { sendTool } from './send.js';
import { subscribeTool } from './subscribe.js';
import { unsubscribeTool } from './unsubscribe.js';

/** The per-process services tools share. */
export interface ToolServices {
  /** Wakes long-poll receives when another process commits. */
  readonly waiter: ChangeWaiter;
  /** Told when a name enters and leaves a receive, so nothing is pushed to it meanwhile. */
  readonly inbox?: Pick<InboxMonitor, 'enterReceive'>;
}

export function allTools(services: ToolServices): ToolDefinition[] {
  return [
    registerTool,
    createChannelTool,
    listChannelsTool,
    subscribeTool,
    unsubscribeTool,
    sendTool,
    receiveTool(services.waiter, services.inbox),
    messageStatusTool,
    historyTool,
    searchTool,
    getMemoryTool,
    editMemoryTool,
    deleteMemoryTool,
    discoverTool,
    reserveTool,
    releaseTool,
    listReservationsTool,
  ];
}
