/**
 * Reading the engine's reply to `POST /images/{name}/push`: a stream of JSON messages (one per
 * layer's progress, then `{"status": "<tag>: digest: sha256:… size: 528"}` and
 * `{"aux": {"Tag", "Digest", "Size"}}`), or an error message anywhere in it (`{"errorDetail":
 * {"message": "…connection refused"}}`) although the HTTP status was 200. However many layers the
 * image has, only the digest and the first error are kept.
 */

/** What a push ended with: the manifest's digest, or the error the engine reported. */
export interface PushReply {
  /** `sha256:<64 hex>`. */
  readonly digest?: string;
  readonly error?: string;
}

interface PushMessage {
  readonly status?: unknown;
  readonly error?: unknown;
  readonly errorDetail?: { readonly message?: unknown };
  readonly aux?: { readonly Digest?: unknown };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const IN_STATUS = /digest: (sha256:[0-9a-f]{64})/;
/** A line longer than this is no message of the push API: it is cut (and then unparsed). */
const MAX_LINE = 64 * 1024;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** The digest or error one line carries. */
const parseLine = (line: string): PushReply => {
  let m: PushMessage;
  try {
    m = JSON.parse(line) as PushMessage;
  } catch {
    return {};
  }
  if (typeof m !== 'object' || m === null) return {};
  const error = text(m.errorDetail?.message) ?? text(m.error);
  if (error !== undefined) return { error };
  const aux = m.aux?.Digest;
  if (typeof aux === 'string' && DIGEST.test(aux)) return { digest: aux };
  const status = typeof m.status === 'string' ? IN_STATUS.exec(m.status)?.[1] : undefined;
  return status === undefined ? {} : { digest: status };
};

/**
 * Reads a push's reply to its end: the first error, else the digest.
 *
 * @example
 * const reply = await readPushReply(await docker.getImage(repo).push({ tag, authconfig: {} }));
 * reply.error ?? reply.digest // 'sha256:…'
 */
export const readPushReply = async (body: AsyncIterable<Buffer | string>): Promise<PushReply> => {
  let digest: string | undefined;
  let error: string | undefined;
  let carry = '';
  const take = (line: string): void => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const parsed = parseLine(trimmed.slice(0, MAX_LINE));
    error ??= parsed.error;
    digest = parsed.digest ?? digest;
  };
  for await (const chunk of body) {
    const lines = (carry + chunk.toString()).split('\n');
    carry = (lines.pop() ?? '').slice(-MAX_LINE);
    lines.forEach(take);
  }
  take(carry);
  if (error !== undefined) return { error };
  return digest === undefined ? {} : { digest };
};
