import { reserve, ReserveErrorDetails, ReserveInput, ReserveOutput } from '../../bus/reservations.js';
import type { ToolDefinition } from '../tool-definition.js';
import { IDEMPOTENT_WRITE } from './annotations.js';

export const reserveTool: ToolDefinition = {
  name: 'reserve',
  description:
    'Agentbus: reserve files before editing ones other agents may change too: paths or globs from the repository root, exclusive unless exclusive: false, for ttl_seconds (default 3600); reserving again renews, or extend_seconds renews by that much from the later of now and the current expiry (at most 24 h ahead). A clash is a conflict error naming the holders; the commit guard refuses commits on others\' exclusive reservations.',
  input: ReserveInput,
  output: ReserveOutput,
  errorDetails: ReserveErrorDetails,
  annotations: IDEMPOTENT_WRITE,
  handler: (ctx, args) => reserve(ctx, args),
};
