/** The demand store in memory (tests and in-process apps): facts in append order, read sorted. */
import type { DemandCursor, DemandFact, DemandRequestColumns, DemandStore, StoredDemandFact } from '../../io/demand.js';
import { requestFacts } from '../demand-chunks.js';

const before = (a: DemandCursor, b: DemandCursor): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/**
 * @example
 * const demand = new MemoryDemandStore();
 */
export class MemoryDemandStore implements DemandStore {
  #facts: StoredDemandFact[] = [];
  #seq = 0;

  appendDemand(facts: readonly DemandFact[], requests: readonly DemandRequestColumns[] = []): Promise<void> {
    for (const fact of facts) this.#facts.push({ seq: (this.#seq += 1), fact: structuredClone(fact) });
    for (const c of requests) for (const fact of requestFacts(c)) this.#facts.push({ seq: (this.#seq += 1), fact });
    return Promise.resolve();
  }

  readDemand(namespaceId: string, window: { readonly from: number; readonly to: number }, after: DemandCursor | undefined, limit: number): Promise<readonly StoredDemandFact[]> {
    const start = after ?? { at: window.from, seq: 0 };
    const rows = this.#facts
      .filter((r) => r.fact.namespaceId === namespaceId && r.fact.at >= window.from && r.fact.at < window.to && before(start, { at: r.fact.at, seq: r.seq }))
      .sort((a, b) => a.fact.at - b.fact.at || a.seq - b.seq)
      .slice(0, Math.max(0, Math.floor(limit)));
    return Promise.resolve(rows.map((r) => ({ seq: r.seq, fact: structuredClone(r.fact) })));
  }

  pruneDemand(before: number): Promise<number> {
    const kept = this.#facts.filter((r) => r.fact.at >= before);
    const pruned = this.#facts.length - kept.length;
    this.#facts = kept;
    return Promise.resolve(pruned);
  }
}
