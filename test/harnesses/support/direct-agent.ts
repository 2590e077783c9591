/**
 * The direct-message scenario (issue 22), with the real harness binary as
 * agent B (display name Kim) and a test-driven `agentbus mcp` as agent A
 * (Ann), against the model stand-in:
 *
 * 1. Kim registers (no subscription: direct messages need none) and is busy
 *    with list_channels.
 * 2. Ann sends Kim a direct message and asks and waits (receive with
 *    reply_to) in her own session, while Kim's next tool call goes on.
 * 3. The hook after that call (and, for Claude Code, the channel event the
 *    server pushes) tells Kim's model of the direct message, first in line.
 * 4. Kim receives it, answers with send to: ["Ann"], reply_to, and
 *    acknowledges.
 * 5. Ann's ask-and-wait returns Kim's answer; message_status shows Kim's
 *    read state acknowledged. Kim's stop is let through and the harness exits.
 */
import type { Launch, LaunchContext, ScriptedRun } from './busy-agent.js';
import { receivedBatch, runScripted, toolNamed } from './busy-agent.js';
import type { McpProcess } from '../../support/mcp-process.js';
import type { Reply, Turn } from './model-server.js';

export const QUESTION = 'Kim, run the tests on your branch and tell me';
export const ANSWER = 'all 212 tests pass on my branch';
/** How the hook line opens the direct part for Kim (src/harness/inbox-text.ts). */
export const DIRECT_NUDGE = 'Kim has a direct message (to Kim alone), newest from Ann';

export interface DirectResult extends ScriptedRun {
  /** The seq of Ann's question. */
  readonly questionSeq: number;
  /** The request the model got right after the direct message was sent (the hook's nudge is in it). */
  readonly nudged: string;
  /** What Kim's receive returned, as the model saw it. */
  readonly receivedText: string;
  /** Ann's ask-and-wait answer: the messages it returned. */
  readonly asked: readonly { sender: string; content: string; reply_to: number | null; direct?: boolean }[];
  /** Kim's read state of the question, from message_status, after the answer came. */
  readonly kimState: string | undefined;
}

type Json = Record<string, any>;

/** Ann asks and waits for a reply to `seq`, again while each bounded wait ends empty, for up to `ms`. */
async function askAndWait(ann: McpProcess, seq: number, ms: number): Promise<Json[]> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const got = (await ann.call('receive', { as: 'Ann', reply_to: seq, wait_seconds: 60 })) as Json;
    if (Array.isArray(got.messages) && got.messages.length > 0) {
      await ann.call('receive', { as: 'Ann', reply_to: seq, ack: got.batch_token, wait_seconds: 0 });
      return got.messages as Json[];
    }
  }
  return [];
}

/** Runs the scenario with the harness `launch` builds; resolves when the harness has exited. */
export async function runDirectAgent(launch: (context: LaunchContext) => Launch, timeoutMs = 240_000): Promise<DirectResult> {
  let questionSeq = -1;
  let nudged = '';
  let receivedText = '';
  let token: string | undefined;
  let asking: Promise<Json[]> | undefined;
  let asked: Json[] = [];
  let kimState: string | undefined;
  const run = await runScripted(
    launch,
    ({ ann, surprises }) =>
      async (turn: Turn): Promise<Reply | undefined> => {
        switch (turn.index) {
          case 0:
            return { tool: { name: toolNamed(turn, 'register'), args: { name: 'Kim' } } };
          case 1: {
            const sent = (await ann.call('send', { as: 'Ann', to: ['Kim'], content: QUESTION })) as Json;
            questionSeq = typeof sent.seq === 'number' ? sent.seq : -1;
            if (questionSeq < 0) surprises.push(`turn 1: the direct send failed: ${JSON.stringify(sent)}`);
            // Ann asks and waits in her own session while Kim's session works on.
            asking = askAndWait(ann, questionSeq, 200_000);
            return { tool: { name: toolNamed(turn, 'list_channels'), args: { as: 'Kim' } } };
          }
          case 2:
            nudged = turn.text;
            if (!turn.text.includes(DIRECT_NUDGE)) surprises.push('turn 2: the request after the tool call does not name the direct message');
            return { tool: { name: toolNamed(turn, 'receive'), args: { as: 'Kim' } } };
          case 3: {
            ({ token, receivedText } = receivedBatch(turn, surprises));
            return { tool: { name: toolNamed(turn, 'send'), args: { as: 'Kim', to: ['Ann'], content: ANSWER, reply_to: questionSeq } } };
          }
          case 4:
            return { tool: { name: toolNamed(turn, 'receive'), args: { as: 'Kim', ...(token === undefined ? {} : { ack: token }) } } };
          case 5: {
            asked = (await asking) ?? [];
            const status = (await ann.call('message_status', { as: 'Ann', seq: questionSeq })) as Json;
            kimState = (status.to as Json[] | undefined)?.find((t) => t.name === 'Kim')?.state as string | undefined;
            return { text: 'Answered Ann.' };
          }
          default:
            return undefined;
        }
      },
    timeoutMs,
  );
  return { ...run, questionSeq, nudged, receivedText, asked: asked as unknown as DirectResult['asked'], kimState };
}

/** The scenario's claims, checked with vitest's expect (passed in so this module stays free of test-runner imports). */
export function checkDirectAgent(expect: typeof import('vitest').expect, r: DirectResult, toolEvent: string): void {
  const context = `harness stderr: ${r.stderr.slice(-3000)}\nsurprises: ${r.surprises.join('; ')}\nfolder: ${r.root}`;
  expect(r.surprises, context).toEqual([]);
  expect(r.exitCode, context).toBe(0);
  expect(r.turns, context).toHaveLength(6);
  // Told by the hook after the busy tool call, direct message first, with how to answer.
  expect(r.nudged).toContain(DIRECT_NUDGE);
  expect(r.nudged).toContain(QUESTION);
  const toolRuns = r.hookRuns.filter((h) => h.event === toolEvent);
  expect(toolRuns.some((h) => h.stdout.includes(DIRECT_NUDGE))).toBe(true);
  // Received (marked direct), answered, acknowledged; Ann's ask-and-wait got exactly the answer.
  expect(r.receivedText).toContain(QUESTION);
  expect(r.receivedText).toMatch(/\\?"direct\\?":true/);
  expect(r.asked.map((m) => [m.sender, m.content, m.reply_to, m.direct])).toEqual([['Kim', ANSWER, r.questionSeq, true]]);
  expect(r.kimState).toBe('acknowledged');
  expect(r.hookRuns.every((h) => h.code === 0)).toBe(true);
  // The server pushed the direct channel event at once (Claude Code shows it with a claude.ai login; the others ignore it).
  expect(r.log).toMatch(/channel event sent[^\n]*"as":"Kim"[^\n]*"direct":"true"/);
}
