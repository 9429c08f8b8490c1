/**
 * The S3 test server (`test/s3/server.js`, started by `.ci/run`): where it is, whether it answers,
 * and a fresh bucket per test.
 */
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3Blobs, type S3Options } from '../../src/adapters/s3/blobs.js';
import { describeNeeding } from '../needs.js';

export const S3_ENDPOINT = process.env['TAVERN_TEST_S3_ENDPOINT'] ?? 'http://127.0.0.1:4569';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** Why the S3 test server cannot be used, or undefined when it answers. */
export async function s3Problem(): Promise<string | undefined> {
  try {
    const res = await fetch(S3_ENDPOINT, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return undefined;
  } catch (e) {
    return e instanceof Error ? `${e.message}${e.cause instanceof Error ? ` (${e.cause.message})` : ''}` : String(e);
  }
}

/** A new empty bucket on the test server and the options reaching it. */
export async function freshBucket(): Promise<S3Options> {
  const bucket = `t-${randomUUID()}`;
  const client = new S3Client({ region: 'us-east-1', endpoint: S3_ENDPOINT, forcePathStyle: true, credentials: CREDENTIALS });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return { bucket, region: 'us-east-1', endpoint: S3_ENDPOINT, forcePathStyle: true, ...CREDENTIALS };
}

export const s3Blobs = async (): Promise<S3Blobs> => new S3Blobs(await freshBucket());

/**
 * `describe(name, body)` when the S3 test server answers; otherwise a failure under CI or a skip.
 *
 * @example
 * describeWithS3('uploads to S3', await s3Problem(), () => { it('uploads', async () => { … }) });
 */
export const describeWithS3 = (name: string, problem: string | undefined, body: () => void): void =>
  describeNeeding({ what: `the S3 test server at ${S3_ENDPOINT}`, start: 'run node test/s3/server.js' }, name, problem, body);
