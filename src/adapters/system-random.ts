/**
 * The server's {@link Random}: version 4 UUIDs and seeds from node:crypto's CSPRNG, drawn a batch
 * at a time.
 *
 * `crypto.randomUUID()` joins each id from 20 pieces (a rope of cons strings, ~0.7 KB per id,
 * which V8 flattens again when the id is hashed or serialized), and a find mints three; here a
 * batch of ids is written out as text in one buffer and each id is one flat string cut from it.
 *
 * @example
 * const random = new SystemRandom();
 * random.uuid(); // '0b9a5c1e-8f43-4d2a-9c71-3e5f6a7b8c9d'
 */
import { randomFillSync } from 'node:crypto';
import type { Random } from '../io/index.js';

/** Ids (and seeds) per draw from the CSPRNG. */
const BATCH = 128;
const UUID_LENGTH = 36;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;
/** Where the dashes of `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx` sit. */
const DASHES = [8, 13, 18, 23];
/** Where each of the 16 bytes' two hex digits go in the text of an id. */
const DIGITS_AT = Uint8Array.from([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]);

export class SystemRandom implements Random {
  readonly #bytes = Buffer.allocUnsafeSlow(16 * BATCH);
  /** The ids' text; the dashes are written once, and each draw writes the digits around them. */
  readonly #text = Buffer.allocUnsafeSlow(UUID_LENGTH * BATCH);
  #ids = BATCH;
  readonly #seeds = new Uint32Array(BATCH);
  #seedsUsed = BATCH;

  constructor() {
    for (let id = 0; id < BATCH; id++) for (const at of DASHES) this.#text[UUID_LENGTH * id + at] = DASH;
  }

  uuid(): string {
    if (this.#ids === BATCH) this.#draw();
    const at = UUID_LENGTH * this.#ids++;
    return this.#text.toString('latin1', at, at + UUID_LENGTH);
  }

  u32(): number {
    if (this.#seedsUsed === BATCH) {
      randomFillSync(this.#seeds);
      this.#seedsUsed = 0;
    }
    return this.#seeds[this.#seedsUsed++] as number;
  }

  /** A fresh batch of ids, written out as text (RFC 9562: version 4, variant 10). */
  #draw(): void {
    const bytes = randomFillSync(this.#bytes);
    const text = this.#text;
    for (let id = 0; id < BATCH; id++) {
      const from = 16 * id;
      bytes[from + 6] = ((bytes[from + 6] as number) & 0x0f) | 0x40;
      bytes[from + 8] = ((bytes[from + 8] as number) & 0x3f) | 0x80;
      const base = UUID_LENGTH * id;
      for (let i = 0; i < 16; i++) {
        const b = bytes[from + i] as number;
        const at = base + (DIGITS_AT[i] as number);
        text[at] = HEX[b >>> 4] as number;
        text[at + 1] = HEX[b & 15] as number;
      }
    }
    this.#ids = 0;
  }
}
