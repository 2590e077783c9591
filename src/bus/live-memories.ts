/**
 * The seqs of the live memory revisions semantic search ranks, kept between
 * queries while migration 0011's memory generation says nothing changed:
 * reading 100,000 seqs from the index cost more than ranking them. Filtered
 * searches and files from before 0011 read the list every time.
 */
import type { Database } from '../db/contract/database.js';
import type { BusContext } from './bus-context.js';
import type { FilterClause } from './search-text-window.js';

interface Kept {
  /** The generation the list was read at. */
  readonly generation: number;
  /** Live memory revision seqs, unfiltered. */
  readonly seqs: readonly number[];
}

const kept = new WeakMap<Database, Kept>();

/** Live memory revision seqs matching the filters (call inside the search's read transaction). */
export function liveMemorySeqs(ctx: BusContext, f: FilterClause): readonly number[] {
  const read = (): number[] =>
    ctx.db
      .all<{ seq: number }>(`SELECT m.seq AS seq FROM messages m WHERE m.memory_id IS NOT NULL AND m.tombstone = 0${f.where}`, f.params)
      .map((r) => r.seq);
  if (f.where !== '') return read();
  const generation = memoryGeneration(ctx.db);
  if (generation === undefined) return read();
  const hit = kept.get(ctx.db);
  if (hit !== undefined && hit.generation === generation) return hit.seqs;
  const seqs = read();
  kept.set(ctx.db, { generation, seqs });
  return seqs;
}

function memoryGeneration(db: Database): number | undefined {
  if (db.get(db.capabilities.dialect.tableExists, ['memory_generation']) === undefined) return undefined;
  return db.get<{ g: number }>('SELECT generation AS g FROM memory_generation WHERE id = 1')?.g;
}
