/**
 * The long poll of `getLobbyLogs` (wire.md §2.4, §1.8): wait for lines newer than the watch index,
 * waking as soon as this instance writes one (the {@link LogBook}) and re-reading the catalog
 * every `logPollMs` for lines written elsewhere; give up after `logWatchMs` (40 s; Rivet 23.2 had
 * no bound). All waiting goes through the injected timers.
 */
import type { LogPage, LogStream } from '../io/catalog.js';
import type { Services } from './deps.js';

/** Lines per watch answer (Rivet: 64 per tick). */
export const WATCH_LINES = 64;

/**
 * Lines with a sequence number above `after`, waiting for the first to arrive; an empty page
 * (`last = after`) when the wait ran out or `signal` aborted.
 *
 * @effects catalog (readLogs), timers
 */
export function waitForLines(services: Services, lobbyId: string, stream: LogStream, after: number, signal: AbortSignal): Promise<LogPage> {
  const { catalog, logBook, timers, settings } = services;
  return new Promise<LogPage>((resolve, reject) => {
    let done = false;
    let reading = false;
    let again = false;
    const cancels: (() => void)[] = [];
    const finish = (page: LogPage): void => {
      if (done) return;
      done = true;
      for (const cancel of cancels) cancel();
      resolve(page);
    };
    const check = (): void => {
      if (done) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      catalog.readLogs(lobbyId, stream, after, WATCH_LINES).then(
        (page) => {
          reading = false;
          if (page.lines.length > 0) finish(page);
          else if (again) {
            again = false;
            check();
          }
        },
        (error: unknown) => {
          done = true;
          for (const cancel of cancels) cancel();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    };
    const poll = (): void => {
      cancels.push(timers.after(settings.logPollMs, () => {
        check();
        if (!done) poll();
      }));
    };
    const onAbort = (): void => finish({ lines: [], last: after });
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    cancels.push(() => signal.removeEventListener('abort', onAbort));
    // Subscribe before the first read, so a line written in between is not missed.
    cancels.push(logBook.subscribe(lobbyId, stream, check));
    cancels.push(timers.after(settings.logWatchMs, onAbort));
    check();
    poll();
  });
}
