/**
 * The layers a `docker save` archive carries compressed (gzip, as an OCI layout from the
 * containerd image store has them), measured on their way to the engine, which expands them
 * itself: each gzip layer is inflated beside the copy (the inflated bytes are counted, then
 * dropped) and a chunk is passed on only once it has been counted, so the engine never gets
 * compressed bytes that would take the archive's layers past the bound. Layers in a compression
 * Node cannot count (zstd, xz, bzip2) are refused.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { ArchiveError } from './archive-error.js';
import { sniff, tooLarge } from './archive-bytes.js';

/** Bytes enough to tell a compression by its magic number. */
const SNIFF_BYTES = 6;

/**
 * A budget of inflated bytes shared by every layer of one archive.
 *
 * @example
 * const meter = new LayerMeter(32e9);
 * body.pipe(meter.layer('blobs/sha256/ab…')).pipe(sink);
 */
export class LayerMeter {
  readonly #limit: number;
  #inflated = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Inflated bytes counted so far. */
  get inflated(): number {
    return this.#inflated;
  }

  /** A pass-through for one entry's body that counts it when it is a compressed layer. */
  layer(name: string): Transform {
    let inflate: Gunzip | undefined;
    /** The first bytes, held until there are enough to tell the compression (however the chunks fall). */
    let head: Buffer[] | undefined = [];
    let failure: Error | undefined;
    const count = (chunk: Buffer): void => {
      this.#inflated += chunk.byteLength;
      if (this.#inflated > this.#limit && failure === undefined) failure = tooLarge(this.#limit);
    };
    /** Decides from `bytes` (the head) how the layer is measured; an error for a compression Node cannot count. */
    const decide = (bytes: Buffer): Error | undefined => {
      const compression = sniff(bytes);
      if (compression === 'gzip') {
        inflate = createGunzip();
        inflate.on('data', count);
        inflate.on('error', (e) => (failure ??= new ArchiveError(`the layer ${name} is not valid gzip: ${e.message}`)));
      } else if (compression !== undefined && compression !== 'lz4') {
        return new ArchiveError(`the layer ${name} is ${compression}-compressed, which this server cannot measure before the engine expands it: save the image with gzip or uncompressed layers`);
      }
      return undefined;
    };
    const pass = (chunk: Buffer, done: TransformCallback): void => {
      if (inflate === undefined) done(null, chunk);
      // Passed on once counted: the engine gets no byte that would expand past the bound.
      else inflate.write(chunk, () => done(failure ?? null, failure === undefined ? chunk : undefined));
    };
    const stream: Transform = new Transform({
      transform: (chunk: Buffer, _encoding, done: TransformCallback) => {
        if (head === undefined) return pass(chunk, done);
        head.push(chunk);
        const bytes = Buffer.concat(head);
        if (bytes.byteLength < SNIFF_BYTES) return done();
        head = undefined;
        const refused = decide(bytes);
        return refused === undefined ? pass(bytes, done) : done(refused);
      },
      flush: (done: TransformCallback) => {
        const rest = head === undefined ? undefined : Buffer.concat(head);
        head = undefined;
        const finish = (): void => {
          if (inflate === undefined) done();
          else inflate.end(() => done(failure ?? null));
        };
        if (rest === undefined || rest.byteLength === 0) return finish();
        const refused = decide(rest);
        if (refused !== undefined) return done(refused);
        return pass(rest, (error, data) => {
          if (error) return done(error);
          if (data !== undefined) stream.push(data);
          finish();
        });
      },
      destroy: (error, done) => {
        inflate?.destroy();
        done(error);
      },
    });
    return stream;
  }
}
