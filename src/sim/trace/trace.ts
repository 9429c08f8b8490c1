import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** Characters `JSON.stringify` escapes in a string: quote, backslash, controls, lone surrogates. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * A string as a JSON literal, exactly as `JSON.stringify(s)` writes it; most strings (ids, codes)
 * need no escape and are only quoted.
 *
 * @example
 * jsonString('lobby-1') // '"lobby-1"'
 */
export const jsonString = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`);

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
  readonly #sink: ((chunk: string) => void) | undefined;
  #length = 0;
  #digest: string | undefined;
  /** Lines not yet fed to the hash: hashing in 64 KiB chunks costs far less than once per record. */
  #pending = '';
  /** The last time {@link appendJson} wrote, as the end of a line (`1204}\n`): records come in runs at one virtual time. */
  #lastT = Number.NaN;
  #lastTText = '';
  /** Each record kind's part of a line (`,"kind":"event","t":`), written once: a run uses a handful of kinds. */
  readonly #kinds = new Map<string, string>();

  /**
   * `keep`: hold the records in memory; `sink`: also receives the JSONL text as it is hashed, in
   * chunks of whole lines (~64 KiB), so a trace of any length streams to a file in bounded memory.
   */
  constructor(options: { readonly keep: boolean; readonly sink?: ((chunk: string) => void) | undefined }) {
    this.#keep = options.keep;
    this.#sink = options.sink;
  }

  append(record: TraceRecord): void {
    this.#add(`${canonicalJson(record)}\n`);
    if (this.#keep) this.#records.push(record);
  }

  /**
   * {@link append} for a record whose `data` the caller already wrote as canonical JSON text (keys
   * in sorted order, only JSON-safe values; strings through {@link jsonString}): the line is put
   * together without serializing, several times faster than `JSON.stringify` on the simulator's
   * millions of records. A test checks the simulator's lines against {@link canonicalJson}.
   *
   * @example
   * trace.appendJson(120_000, 'event', `{"lobby":${jsonString(lobbyId)},"type":"lobby-ready"}`);
   */
  appendJson(t: number, kind: string, data: string): void {
    if (t !== this.#lastT) {
      if (!Number.isFinite(t)) throw new TypeError(`cannot trace the time ${t}`);
      this.#lastT = t;
      this.#lastTText = `${String(t)}}\n`;
    }
    let kindText = this.#kinds.get(kind);
    if (kindText === undefined) this.#kinds.set(kind, (kindText = `,"kind":${jsonString(kind)},"t":`));
    this.#add(`{"data":${data}${kindText}${this.#lastTText}`);
    if (this.#keep) this.#records.push({ data: JSON.parse(data) as unknown, kind, t });
  }

  /** Adds one line, its newline included. */
  #add(line: string): void {
    if (this.#digest !== undefined) throw new Error('trace: append after hash()');
    this.#pending += line;
    if (this.#pending.length >= 65_536) this.#flush();
    this.#length += 1;
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
    if (this.#pending === '') return;
    this.#hash.update(this.#pending);
    this.#sink?.(this.#pending);
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
