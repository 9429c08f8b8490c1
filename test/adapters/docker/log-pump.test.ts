import { describe, expect, it } from 'vitest';
import { LogPump, splitTimestamp } from '../../../src/adapters/docker/log-pump.js';
import type { LogLine, LogStream } from '../../../src/io/catalog.js';

class Sink {
  readonly lines: { stream: LogStream; line: LogLine }[] = [];
  write(_lobbyId: string, stream: LogStream, lines: readonly LogLine[]): Promise<void> {
    for (const line of lines) this.lines.push({ stream, line });
    return Promise.resolve();
  }
  text(stream: LogStream): string[] {
    return this.lines.filter((l) => l.stream === stream).map((l) => l.line.line);
  }
}

const T = '2026-11-26T11:20:00.123456789Z';

describe('LogPump', () => {
  it('splits the engine lines across chunks, keeps the engine time (ms) and both streams apart', async () => {
    const sink = new Sink();
    const pump = new LogPump('l', sink, { maxLineBytes: 100, maxBytes: 10_000 }, () => 5);
    pump.push('std_out', `${T} hel`);
    pump.push('std_out', `lo\n${T} world\r\n`);
    pump.push('std_err', Buffer.from(`${T} oops\nno timestamp here\n`));
    pump.push('std_out', `${T} unfinished`);
    await pump.end();
    expect(sink.text('std_out')).toEqual(['hello', 'world', 'unfinished']);
    expect(sink.text('std_err')).toEqual(['oops', 'no timestamp here']);
    expect(sink.lines.map((l) => l.line.at)).toEqual([Date.parse(T), Date.parse(T), Date.parse(T), Date.parse(T), 5]);
  });

  it('cuts long lines at the byte limit, never inside a character', async () => {
    const sink = new Sink();
    const pump = new LogPump('l', sink, { maxLineBytes: 5, maxBytes: 10_000 }, () => 0);
    pump.push('std_out', `${T} abcdefgh\n${T} aé€x\n`);
    await pump.end();
    expect(sink.text('std_out')).toEqual(['abcde', 'aé']);
  });

  it('caps a lobby\'s bytes: later lines are dropped, and Tavern\'s own stream says so once at the cap and once at the end', async () => {
    const sink = new Sink();
    const pump = new LogPump('l', sink, { maxLineBytes: 100, maxBytes: 20 }, () => 0);
    for (let i = 0; i < 10; i++) pump.push('std_out', `${T} line ${i}\n`);
    await pump.end();
    expect(sink.text('std_out')).toEqual(['line 0', 'line 1']);
    expect(pump.dropped).toEqual({ lines: 8, bytes: 56 });
    expect(sink.text('std_err')).toEqual([]);
    expect(sink.text('tavern')).toEqual([
      "this lobby's log reached 20 bytes: further lines are dropped",
      "8 lines (56 bytes) were dropped over this lobby's log limit",
    ]);
  });

  it('bounds a line that never ends', async () => {
    const sink = new Sink();
    const pump = new LogPump('l', sink, { maxLineBytes: 10, maxBytes: 10_000 }, () => 0);
    for (let i = 0; i < 10; i++) pump.push('std_out', 'x'.repeat(10));
    await pump.end();
    expect(sink.text('std_out').every((l) => l.length <= 10)).toBe(true);
    expect(sink.text('std_out').length).toBeGreaterThan(1);
  });

  it('reports a sink that failed when it ends', async () => {
    const pump = new LogPump('l', { write: () => Promise.reject(new Error('disk full')) }, { maxLineBytes: 10, maxBytes: 100 }, () => 0);
    pump.push('std_out', 'a\n');
    await expect(pump.end()).rejects.toThrow('disk full');
  });

  it('reads the engine timestamp prefix', () => {
    expect(splitTimestamp(`${T} a b`)).toEqual({ at: Date.parse(T), text: 'a b' });
    expect(splitTimestamp('plain text')).toEqual({ text: 'plain text' });
    expect(splitTimestamp('')).toEqual({ text: '' });
  });
});
