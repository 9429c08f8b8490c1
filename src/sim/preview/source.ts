/**
 * The recorded demand a preview replays, read as the replay goes: the export's lines
 * (`services/demand.ts`, the JSONL `tavern demand export` writes) parsed into batches of requests.
 * Between batches the event loop gets a turn, so a server running a preview keeps answering.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseRecordedDemand } from '../scenario/recorded.js';
import type { RecordedRequest } from '../scenario/types.js';

/** Requests per batch: a few milliseconds of simulation between two turns of the event loop. */
export const BATCH = 500;

/**
 * Batches of requests from JSONL lines (each with its `\n`); `seen` counts the requests per game mode
 * and region as they pass. A line the simulator cannot read is a bug of the export: it throws.
 *
 * @example
 * for await (const batch of recordedBatches(exportDemand(store, ns, window, options))) console.log(batch.length);
 */
export async function* recordedBatches(lines: AsyncIterable<string>, seen?: (r: RecordedRequest) => void): AsyncGenerator<readonly RecordedRequest[]> {
  let text = '';
  let count = 0;
  let line = 0;
  const flush = (): RecordedRequest[] => {
    const parsed = parseRecordedDemand(text);
    if (!parsed.ok) throw new Error(`the recorded demand has a line the simulator cannot read: ${parsed.error.map((p) => p.path.join('.')).join(', ')}`);
    text = '';
    count = 0;
    return parsed.value.map((r) => {
      seen?.(r);
      line += 1;
      return { ...r, line };
    });
  };
  for await (const l of lines) {
    text += l;
    count += 1;
    if (count >= BATCH) {
      yield flush();
      await nextTurn();
    }
  }
  if (count > 0) yield flush();
}
