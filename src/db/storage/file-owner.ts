/**
 * Who owns a file, in words: the user name from the system's user database
 * when it has one, else the bare uid. Used in messages that must tell a person
 * whose file blocks agentbus and as whom agentbus would have to run.
 */
import { readFileSync } from 'node:fs';

/** The user name of `uid` from /etc/passwd, or undefined (no such entry, no file, not POSIX). */
export function userName(uid: number, passwdPath = '/etc/passwd'): string | undefined {
  let text: string;
  try {
    text = readFileSync(passwdPath, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields.length >= 3 && Number(fields[2]) === uid && fields[2] !== '') return fields[0];
  }
  return undefined;
}

/** `user bob (uid 1001)`, or `uid 1001` when the uid has no name. */
export function describeUser(uid: number): string {
  const name = userName(uid);
  return name === undefined ? `uid ${uid}` : `user ${name} (uid ${uid})`;
}

/** This process's uid, or undefined where the platform has none. */
export function currentUid(): number | undefined {
  return process.getuid?.();
}
