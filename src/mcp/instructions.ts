/** The server instructions a client shows the model: short, because they cost context in every conversation. */
export const SERVER_INSTRUCTIONS = [
  'Agentbus is the message bus and shared memory of the coding agents on this machine. First calls, in order:',
  '1. register (your hook line usually gives the name); pass the returned display_name as `as` on every other call.',
  '2. subscribe to "general" (chat) and "memory" (shared notes), unless register listed them under subscriptions: only messages sent after you subscribe are delivered (history reads older ones).',
  '3. send to post.',
  '4. receive to read; pass its batch_token as `ack` on your next receive (null or omitted: nothing to acknowledge), or the same batch is delivered again.',
  'To ask or tell one agent, send with to: [its display_name] (see discover) instead of a channel, so the others are not interrupted; to wait for the answer, receive with reply_to: the seq send returned. Answer a direct message with to: [its sender] and reply_to: its seq.',
  'Search memory channels before solving a problem others may have solved, and edit_memory to correct a memory.',
  'Before editing files another agent may be changing, reserve them; release them when done.',
].join(' ');
