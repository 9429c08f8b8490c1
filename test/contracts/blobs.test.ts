/** The blob contract on the local disk and on the S3 test server (which must answer under CI). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import { s3Blobs, s3Problem, S3_ENDPOINT } from '../s3/s3.js';
import { blobsContract } from './blobs.contract.js';

blobsContract('local disk', () => Promise.resolve(new FsBlobs(mkdtempSync(join(tmpdir(), 'tavern-blobs-contract-')))));

const problem = await s3Problem();
if (problem !== undefined && process.env['CI'] !== undefined) {
  // In CI the S3 test server is part of the environment: its absence is a failure, never a skip.
  describe('Blobs contract: S3', () => {
    it(`needs the S3 test server at ${S3_ENDPOINT}`, () => {
      throw new Error(`The S3 test server is unreachable at ${S3_ENDPOINT}: ${problem} (start it with node test/s3/server.js)`);
    });
  });
} else if (problem !== undefined) {
  console.warn(`The S3 test server is unreachable at ${S3_ENDPOINT} (${problem}): the S3 blob tests are SKIPPED`);
  describe.skip(`Blobs contract: S3: SKIPPED, no S3 test server at ${S3_ENDPOINT} (${problem}); run node test/s3/server.js, or set CI to make this fail`, () => {
    it('contract', () => undefined);
  });
} else {
  blobsContract('S3', s3Blobs);
}
