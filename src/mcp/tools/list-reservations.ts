import { listReservations, ListReservationsInput, ListReservationsOutput } from '../../bus/reservations.js';
import type { ToolDefinition } from '../tool-definition.js';
import { READ_ONLY } from './annotations.js';

export const listReservationsTool: ToolDefinition = {
  name: 'list_reservations',
  description:
    'Agentbus: list live file reservations in the repository: everyone\'s, only yours (mine), or those overlapping the given paths, with holder, reason and expiry.',
  input: ListReservationsInput,
  output: ListReservationsOutput,
  annotations: READ_ONLY,
  handler: (ctx, args) => listReservations(ctx, args),
};
