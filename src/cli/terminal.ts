/**
 * Output for a terminal or for a file: the ANSI escape sequences programs print for colour and
 * cursor movement are kept on a terminal and removed anywhere else (a CI log, a pipe, a file).
 */
import { Transform } from 'node:stream';

/** CSI (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC ] … ESC \`) and two-byte escapes: control characters are the point here. */
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
/** An escape sequence cut off at the end of a chunk: held back until the next chunk completes it. */
// eslint-disable-next-line no-control-regex
const PARTIAL = /\u001b(?:\[[0-?]*[ -/]*|\][^\u0007\u001b]*\u001b?)?$/;

/**
 * `text` without ANSI escape sequences.
 *
 * @example
 * stripAnsi('\u001b[32mok\u001b[0m'); // 'ok'
 */
export const stripAnsi = (text: string): string => text.replace(ANSI, '');

/**
 * A stream to write a program's output through into `destination`: unchanged on a terminal,
 * without escape sequences anywhere else (even one split across chunks).
 *
 * @example
 * child.stdout.pipe(forDestination(process.stderr)).pipe(process.stderr, { end: false });
 */
export function forDestination(destination: NodeJS.WritableStream & { readonly isTTY?: boolean }): Transform {
  if (destination.isTTY === true) return new Transform({ transform: (chunk: Buffer, _e, done) => done(null, chunk) });
  let held = '';
  return new Transform({
    decodeStrings: true,
    transform(chunk: Buffer, _e, done) {
      const text = held + chunk.toString('utf8');
      const partial = PARTIAL.exec(text);
      held = partial === null ? '' : partial[0];
      done(null, stripAnsi(partial === null ? text : text.slice(0, partial.index)));
    },
    flush(done) {
      done(null, stripAnsi(held));
    },
  });
}
