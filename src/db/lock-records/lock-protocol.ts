/** The two lock protocols a file can record (src/db/storage/file-header.ts), and how one leads to the other. */
import type { LockProtocol } from '../contract/driver.js';

/** The protocol `agentbus convert` turns a `protocol` file into. */
export function otherProtocol(protocol: LockProtocol): LockProtocol {
  return protocol === 'posix' ? 'portable' : 'posix';
}
