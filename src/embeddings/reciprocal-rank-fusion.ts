/**
 * Reciprocal rank fusion: merges rankings whose scores are not comparable
 * (bm25 and cosine) by position alone. Each list contributes 1 / (k + rank)
 * with rank counted from 1; k = 60 is the constant from the original paper.
 */
import { byScoreThenNewer, type Ranked } from './ranking.js';

export const RRF_K = 60;

/** One ranking whose score is the summed reciprocal ranks, best first. */
export function reciprocalRankFusion(rankings: readonly (readonly Ranked[])[], k = RRF_K): Ranked[] {
  const scores = new Map<number, number>();
  for (const ranking of rankings) {
    ranking.forEach((item, index) => {
      scores.set(item.seq, (scores.get(item.seq) ?? 0) + 1 / (k + index + 1));
    });
  }
  return [...scores].map(([seq, score]) => ({ seq, score })).sort(byScoreThenNewer);
}
