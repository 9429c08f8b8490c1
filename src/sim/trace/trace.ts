import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** One step of a simulation run: when (virtual ms), what kind (input, decision, effect...), and its data. */
export interface TraceRecord {
  readonly t: number;
  readonly kind: string;
  readonly data: unknown;
}

/**
 * A run's trace: records are hashed as they are appended (SHA-256 over canonical JSON lines), and
 * kept too when `keep` is set (for golden files and divergence reports). The same scenario and seed
 * give the same hash on any machine.
 *
 * @example
 * const trace = new Trace({ keep: false });
 * trace.append({ t: 0, kind: 'input', data: { find: 'default' } });
 * trace.hash(); // 'sha256:…'
 */
export class Trace {
  readonly #hash: Hash = createHash('sha256');
  readonly #records: TraceRecord[] = [];
  readonly #keep: boolean;
  #length = 0;
  #digest: string | undefined;
  /** Lines not yet fed to the hash: hashing in 64 KiB chunks costs far less than once per record. */
  #pending = '';

  constructor(options: { readonly keep: boolean }) {
    this.#keep = options.keep;
  }

  append(record: TraceRecord): void {
    this.#add(record, canonicalJson(record));
  }

  /**
   * {@link append} for a record built with every object's keys already in sorted order (the
   * record's own as `{data, kind, t}`) and only JSON-safe values: `JSON.stringify` then gives the
   * canonical line, several times faster than sorting keys at every level. The simulator's records
   * are built this way (a test checks each line against {@link canonicalJson}).
   */
  appendSorted(record: TraceRecord): void {
    this.#add(record, JSON.stringify(record));
  }

  #add(record: TraceRecord, line: string): void {
    if (this.#digest !== undefined) throw new Error('trace: append after hash()');
    this.#pending += `${line}\n`;
    if (this.#pending.length >= 65_536) this.#flush();
    this.#length += 1;
    if (this.#keep) this.#records.push(record);
  }

  get length(): number {
    return this.#length;
  }

  /** The records, when kept. */
  records(): readonly TraceRecord[] {
    if (!this.#keep) throw new Error('trace: records were not kept (construct with keep: true)');
    return this.#records;
  }

  #flush(): void {
    this.#hash.update(this.#pending);
    this.#pending = '';
  }

  /** The hash of everything appended; the trace is closed afterwards. */
  hash(): string {
    if (this.#digest === undefined) this.#flush();
    this.#digest ??= `sha256:${this.#hash.digest('hex')}`;
    return this.#digest;
  }
}

/**
 * A trace as JSONL (one canonical record per line): the golden-file format.
 *
 * @example
 * serializeTrace([{ t: 0, kind: 'input', data: {} }]) // '{"data":{},"kind":"input","t":0}\n'
 */
export const serializeTrace = (records: readonly TraceRecord[]): string => records.map((r) => `${canonicalJson(r)}\n`).join('');

/** Read a JSONL trace back; a malformed line is reported with its number. */
export const parseTrace = (text: string): TraceRecord[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const value: unknown = JSON.parse(line);
      const r = value as Partial<TraceRecord> | null;
      if (r === null || typeof r !== 'object' || typeof r.t !== 'number' || typeof r.kind !== 'string' || !('data' in r)) {
        throw new Error(`trace line ${i + 1}: not a trace record`);
      }
      return { t: r.t, kind: r.kind, data: r.data };
    });

export interface Divergence {
  /** The 0-based index of the first record that differs. */
  readonly index: number;
  readonly expected?: TraceRecord;
  readonly actual?: TraceRecord;
}

/**
 * Where two traces first differ, or undefined when they are equal.
 *
 * @example
 * firstDivergence(golden, run)?.index
 */
export const firstDivergence = (expected: readonly TraceRecord[], actual: readonly TraceRecord[]): Divergence | undefined => {
  const n = Math.max(expected.length, actual.length);
  for (let i = 0; i < n; i++) {
    const e = expected[i];
    const a = actual[i];
    if (e === undefined || a === undefined || canonicalJson(e) !== canonicalJson(a)) {
      return { index: i, ...(e === undefined ? {} : { expected: e }), ...(a === undefined ? {} : { actual: a }) };
    }
  }
  return undefined;
};

/**
 * A readable report of a divergence: the record number, both records, and the fields that differ.
 *
 * @example
 * formatDivergence({ index: 3, expected, actual }) // 'traces diverge at record 4 (t=120000) ...'
 */
export const formatDivergence = (d: Divergence): string => {
  const at = d.expected?.t ?? d.actual?.t;
  const lines = [`traces diverge at record ${d.index + 1}${at === undefined ? '' : ` (t=${at})`}`];
  lines.push(`  expected: ${d.expected ? canonicalJson(d.expected) : '(end of trace)'}`);
  lines.push(`  actual:   ${d.actual ? canonicalJson(d.actual) : '(end of trace)'}`);
  if (d.expected && d.actual) {
    const e = d.expected.data;
    const a = d.actual.data;
    if (d.expected.kind !== d.actual.kind) lines.push(`  kind: ${d.expected.kind} ≠ ${d.actual.kind}`);
    if (e !== null && a !== null && typeof e === 'object' && typeof a === 'object') {
      const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])].sort();
      for (const k of keys) {
        const ev = canonicalJson((e as Record<string, unknown>)[k] ?? null);
        const av = canonicalJson((a as Record<string, unknown>)[k] ?? null);
        if (ev !== av) lines.push(`  data.${k}: ${ev} ≠ ${av}`);
      }
    }
  }
  return lines.join('\n');
};
