/** Every tool the server offers, in the order tools/list shows them. */
import type { ToolDefinition } from '../tool-definition.js';

export const allTools: readonly ToolDefinition[] = [];
