import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UploadFile } from '../../src/io/catalog.js';
import { bodyProblem, declaredLengthProblem, fileChunks, incomplete, missingOf, planUpload } from '../../src/services/upload-rules.js';
import { DEFAULT_UPLOAD_LIMITS } from '../../src/services/upload-types.js';

const GAME = '11111111-1111-4111-8111-111111111111';
const LIMITS = { ...DEFAULT_UPLOAD_LIMITS, chunkBytes: 100, maxParts: 50, maxFileBytes: 10_000, maxBuildBytes: 20_000 };

/** A file as `planUpload` stores it: one part, or as many chunks as it needs. */
const plannedFile: fc.Arbitrary<UploadFile> = fc.record({ contentLength: fc.integer({ min: 0, max: 5_000 }), multipart: fc.boolean() }).map(({ contentLength, multipart }) => ({
  path: 'image.tar', contentLength, parts: multipart && contentLength > LIMITS.chunkBytes ? Math.ceil(contentLength / LIMITS.chunkBytes) : 1,
}));

describe('upload rules', () => {
  it('splits a multipart build into chunks of the chunk size (the last shorter), and nothing else', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5_000 }), fc.boolean(), fc.constantFrom<'build' | 'cdn'>('build', 'cdn'), (contentLength, multipart, kind) => {
        const r = planUpload({ gameId: GAME, kind, files: [{ path: 'image.tar', contentLength }], multipart }, LIMITS);
        const split = multipart && kind === 'build' && contentLength > LIMITS.chunkBytes;
        if (multipart && kind === 'cdn') expect(r.ok ? undefined : r.error.path).toEqual(['multipart_upload']);
        else expect(r).toEqual({ ok: true, value: [{ path: 'image.tar', contentLength, parts: split ? Math.ceil(contentLength / LIMITS.chunkBytes) : 1 }] });
      }),
    );
  });

  it("tiles a file with its parts: 1-based, contiguous from 0, each at most a chunk, adding up to the file's length", () => {
    fc.assert(
      fc.property(plannedFile, (file) => {
        const chunks = fileChunks(file, LIMITS.chunkBytes);
        expect(chunks.map((c) => c.part)).toEqual(Array.from({ length: file.parts }, (_, i) => i + 1));
        let offset = 0;
        for (const c of chunks) {
          expect(c.offset).toBe(offset);
          if (file.parts > 1) expect(c.length > 0 && c.length <= LIMITS.chunkBytes).toBe(true);
          offset += c.length;
        }
        expect(offset).toBe(file.contentLength);
      }),
    );
  });

  it('finds a file whole exactly when each part arrived at its size, and names each part that did not', () => {
    fc.assert(
      fc.property(plannedFile.chain((file) => fc.tuple(fc.constant(file), fc.array(fc.option(fc.nat({ max: 200 }), { nil: undefined }), { minLength: file.parts, maxLength: file.parts }), fc.boolean())), ([file, arrived, exact]) => {
        const chunks = fileChunks(file, LIMITS.chunkBytes);
        const sizes = exact ? chunks.map((c) => c.length) : arrived;
        const missing = missingOf(file, sizes);
        const absent = sizes.flatMap((s, i) => (s === undefined ? [i + 1] : []));
        const sum = sizes.reduce<number>((n, s) => n + (s ?? 0), 0);
        expect(missing.length === 0).toBe(absent.length === 0 && sum === file.contentLength);
        if (file.parts > 1) expect(missing.flatMap((m) => (m.part === undefined ? [] : [m.part]))).toEqual(absent);
        const refusal = incomplete({ id: 'u', gameId: GAME, kind: 'build', files: [file], createdAt: 0, expiresAt: 1 }, missing);
        expect(refusal === undefined ? undefined : [refusal.code, refusal.path]).toEqual(missing.length === 0 ? undefined : ['UPLOAD_INCOMPLETE', ['files', '0', 'path']]);
      }),
    );
  });

  it('takes a body exactly when all of its part and nothing more came, uncut; and a declared length only if it is the part', () => {
    fc.assert(
      fc.property(fc.nat({ max: 300 }), fc.nat({ max: 300 }), fc.boolean(), fc.option(fc.nat({ max: 300 }), { nil: undefined }), (seen, length, cut, declared) => {
        expect(bodyProblem({ seen, cut }, length) === undefined).toBe(!cut && seen === length);
        expect(declaredLengthProblem(length, declared) === undefined).toBe(declared === undefined || declared === length);
      }),
    );
  });
});
