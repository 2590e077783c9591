/** Asking a person a yes/no question on the terminal. */
import { createInterface } from 'node:readline';
import type { CliIo } from './cli-io.js';

/** Asks `question` on stderr and reads one line from stdin; only "y" or "yes" (any case) is a yes. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  try {
    io.stderr.write(`${question} [y/N] `);
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}
