import { release, ReleaseInput, ReleaseOutput } from '../../bus/reservations.js';
import type { ToolDefinition } from '../tool-definition.js';
import { IDEMPOTENT_WRITE } from './annotations.js';

export const releaseTool: ToolDefinition = {
  name: 'release',
  description: 'Agentbus: release your file reservations in the repository (the given patterns exactly as reserved, or all of them when paths is omitted).',
  input: ReleaseInput,
  output: ReleaseOutput,
  annotations: IDEMPOTENT_WRITE,
  handler: (ctx, args) => release(ctx, args),
};
