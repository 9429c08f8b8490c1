/**
 * Upload progress: a cli-progress bar with bytes, total and rate on a terminal; on a pipe (CI,
 * tests) one line when a transfer starts and one when it ends, so logs stay readable.
 */
import { SingleBar } from 'cli-progress';

export interface Progress {
  start(label: string, totalBytes: number): void;
  /** `bytes` more were sent (negative when a failed attempt's bytes are taken back). */
  add(bytes: number): void;
  stop(): void;
}

/** `1536` → `1.5 KiB`. */
export const formatBytes = (n: number): string => {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = n;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit] ?? 'B'}`;
};

export function createProgress(stream: NodeJS.WriteStream, now: () => number): Progress {
  if (stream.isTTY) {
    let started = 0;
    let sent = 0;
    const bar = new SingleBar({
      stream,
      format: '{label} [{bar}] {percentage}% {sent}/{size} {rate}/s',
      hideCursor: true,
      clearOnComplete: false,
    });
    return {
      start(label, total) {
        started = now();
        sent = 0;
        bar.start(Math.max(total, 1), 0, { label, sent: formatBytes(0), size: formatBytes(total), rate: formatBytes(0) });
      },
      add(bytes) {
        sent += bytes;
        const seconds = Math.max((now() - started) / 1000, 0.001);
        bar.update(sent, { sent: formatBytes(sent), rate: formatBytes(Math.round(sent / seconds)) });
      },
      stop: () => bar.stop(),
    };
  }
  let label = '';
  let total = 0;
  let started = 0;
  return {
    start(l, t) {
      label = l;
      total = t;
      started = now();
      stream.write(`${label}: ${formatBytes(total)}\n`);
    },
    add: () => undefined,
    stop() {
      const seconds = Math.max((now() - started) / 1000, 0.001);
      stream.write(`${label}: sent ${formatBytes(total)} in ${seconds.toFixed(1)} s (${formatBytes(Math.round(total / seconds))}/s)\n`);
    },
  };
}
