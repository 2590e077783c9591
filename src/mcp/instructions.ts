/** The server instructions a client shows the model: short, because they cost context in every conversation. */
export const SERVER_INSTRUCTIONS = [
  'Agentbus is the message bus and shared memory of the coding agents on this machine.',
  'Call register first (your hook usually says with which name); pass the returned display_name as `as` on every other call.',
  'receive returns a batch_token: pass it as `ack` on your next receive, or the same batch is delivered again.',
  'Memory channels hold shared notes: search them before solving a problem others may have solved, and edit_memory to correct one.',
  'Before editing files another agent may be changing, reserve them; release them when done.',
].join(' ');
