/**
 * The MCP protocol revisions agentbus answers `initialize` with: the one the
 * client asks for when it is listed here, else the newest. The list follows
 * @modelcontextprotocol/sdk's (a test compares them, so a dependency update
 * that adds a revision shows up as a failing test, not as a silent mismatch).
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];

/** The newest revision: what a client asking for an unknown one gets. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';

/** The revision to answer a client that asked for `requested`. */
export function negotiateProtocolVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}
