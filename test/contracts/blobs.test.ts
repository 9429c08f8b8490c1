/** The blob contract on the local disk and on the S3 test server (which must answer under CI). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBlobs } from '../../src/adapters/fs/blobs.js';
import { describeWithS3, s3Blobs, s3Problem } from '../s3/s3.js';
import { blobsContract } from './blobs.contract.js';

blobsContract('local disk', () => Promise.resolve(new FsBlobs(mkdtempSync(join(tmpdir(), 'tavern-blobs-contract-')))));

const problem = await s3Problem();
describeWithS3('Blobs contract: S3 (the test server)', problem, () => blobsContract('S3', s3Blobs));
