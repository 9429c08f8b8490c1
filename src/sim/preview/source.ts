/**
 * The recorded demand a preview replays, read as the replay goes: the export's lines
 * (`services/demand.ts`, the JSONL `tavern demand export` writes) cut into texts of {@link BATCH}
 * lines, then parsed into batches of requests. Between texts the event loop gets a turn, so a
 * server running a preview keeps answering. The texts are what the main thread hands to the
 * replays' worker threads (`replay-worker.ts`): one export read for both runs.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseRecordedDemand } from '../scenario/recorded.js';
import type { RecordedRequest } from '../scenario/types.js';

/** Requests per batch: a few milliseconds of simulation between two turns of the event loop. */
export const BATCH = 500;

/**
 * Texts of {@link BATCH} JSONL lines (the last one shorter) from pages of lines (each with its `\n`).
 *
 * @example
 * for await (const text of textBatches(exportDemandPages(store, ns, window, options))) worker.postMessage(text);
 */
export async function* textBatches(pages: AsyncIterable<readonly string[]>): AsyncGenerator<string> {
  let text = '';
  let count = 0;
  for await (const page of pages) {
    for (const l of page) {
      text += l;
      count += 1;
      if (count < BATCH) continue;
      yield text;
      text = '';
      count = 0;
      await nextTurn();
    }
  }
  if (count > 0) yield text;
}

/**
 * Batches of requests from texts of JSONL lines, numbered from the first text's first line; `seen`
 * sees each request as it passes. A line the simulator cannot read is a bug of the export: it throws.
 *
 * @example
 * for await (const batch of recordedBatches(textBatches(exportDemandPages(store, ns, window, options)))) console.log(batch.length);
 */
export async function* recordedBatches(texts: AsyncIterable<string>, seen?: (r: RecordedRequest) => void): AsyncGenerator<readonly RecordedRequest[]> {
  let line = 0;
  for await (const text of texts) {
    const parsed = parseRecordedDemand(text);
    if (!parsed.ok) throw new Error(`the recorded demand has a line the simulator cannot read: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
    yield parsed.value.map((r) => {
      seen?.(r);
      line += 1;
      return { ...r, line };
    });
  }
}
