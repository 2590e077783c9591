import { describe, expect, it } from 'vitest';
import { candidateDisplayName, checkDisplayName, checkName, isCandidateOf, isChannelName } from '../../src/bus/names.js';
import { BusError } from '../../src/bus/bus-error.js';
import { expectError } from '../support/expect-error.js';

describe('names', () => {
  it('suffixes top-level names with a number and children with -N', () => {
    expect([1, 2, 3].map((n) => candidateDisplayName('Sam', false, n))).toEqual(['Sam', 'Sam2', 'Sam3']);
    expect([1, 2, 3].map((n) => candidateDisplayName('Sam/task', true, n))).toEqual(['Sam/task', 'Sam/task-2', 'Sam/task-3']);
  });

  it('recognises the candidates of a base name and nothing else', () => {
    expect(isCandidateOf('Sam', 'Sam', false)).toBe(true);
    expect(isCandidateOf('Sam7', 'Sam', false)).toBe(true);
    expect(isCandidateOf('Sam1', 'Sam', false)).toBe(false);
    expect(isCandidateOf('Sam07', 'Sam', false)).toBe(false);
    expect(isCandidateOf('Samuel', 'Sam', false)).toBe(false);
    expect(isCandidateOf('Sam/t-2', 'Sam/t', true)).toBe(true);
    expect(isCandidateOf('Sam/t2', 'Sam/t', true)).toBe(false);
  });

  it('checks name bytes, control characters and slashes', async () => {
    checkName('name', 'a'.repeat(128));
    checkName('name', '名前');
    for (const bad of ['', 'a'.repeat(129), '€'.repeat(43), 'a\u0007', 'a\u0085', 'a/b']) {
      expect((await expectError(() => checkName('name', bad), BusError)).field).toBe('name');
    }
    checkDisplayName('parent', 'Sam2/task-3/sub');
    for (const bad of ['/Sam', 'Sam//x', 'Sam/', 'x'.repeat(1025), 'a\tb']) {
      expect((await expectError(() => checkDisplayName('parent', bad), BusError)).field).toBe('parent');
    }
  });

  it('accepts channel names of letters, digits, dot, underscore and dash', () => {
    expect(['general', 'team.backend', 'a_b-c', '9lives'].every(isChannelName)).toBe(true);
    expect(['', '.hidden', 'a b', 'ä', 'x'.repeat(129)].some(isChannelName)).toBe(false);
  });
});
