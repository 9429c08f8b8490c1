/**
 * A worker thread running one replay of a preview (`workers.ts` starts it): its job comes as
 * `workerData`, the recording's texts as messages (`{ text }`, then `{ end: true }`). It answers
 * `{ ack: true }` each time the run takes a text (so the main thread holds back the next ones
 * until there is room) and `{ outcome }` once the run is over.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { replayRecorded, type ReplayJob } from './replay.js';

/** A message from the main thread. */
export type ToReplay = { readonly text: string } | { readonly end: true };

const port = parentPort;
if (port === null) throw new Error('replay-worker.ts runs in a worker thread');

const queue: (string | undefined)[] = [];
let wake: (() => void) | undefined;
port.on('message', (m: ToReplay) => {
  queue.push('text' in m ? m.text : undefined);
  wake?.();
  wake = undefined;
});

async function* texts(): AsyncGenerator<string> {
  for (;;) {
    while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const text = queue.shift();
    if (text === undefined) return;
    port?.postMessage({ ack: true });
    yield text;
  }
}

port.postMessage({ outcome: await replayRecorded(workerData as ReplayJob, texts()) });
