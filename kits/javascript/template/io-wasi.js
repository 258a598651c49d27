// The component's I/O shim (build.sh puts it in io.js's place): stdin and
// stdout are WASI 0.2 streams. A blocking read returns what the host offers
// (it never waits for more once there is some); a write is flushed before
// it returns, so the host sees the reply line at once.

import { getStdin } from 'wasi:cli/stdin@0.2.12';
import { getStdout } from 'wasi:cli/stdout@0.2.12';
import { getStderr } from 'wasi:cli/stderr@0.2.12';

// What stdin has now, waiting for some when it has none; null at its end.
export function readChunk() {
  try {
    return getStdin().blockingRead(65536n);
  } catch (e) {
    return null; // stream-error.closed: the end of stdin
  }
}

// blocking-write-and-flush takes at most 4096 bytes per call.
function writeAll(stream, bytes) {
  for (let off = 0; off < bytes.length; off += 4096) {
    stream.blockingWriteAndFlush(bytes.subarray(off, off + 4096));
  }
}

// Writes bytes to stdout, flushed.
export function writeOut(bytes) {
  writeAll(getStdout(), bytes);
}

// Writes bytes to stderr, flushed.
export function writeErr(bytes) {
  writeAll(getStderr(), bytes);
}

// Seed bytes from wasi:random, which the sandbox seeds from the match.
export function seedBytes(n) {
  return crypto.getRandomValues(new Uint8Array(n));
}

// Milliseconds of the monotonic clock: in the sandbox, virtual time (fuel).
export function nowMs() {
  return performance.now();
}

let loop = null;

// Keeps the bot's loop for run(): the module's top level runs at build time
// (the snapshot keeps what it made), the loop when the component runs.
export function start(l) {
  loop = l;
}

// wasi:cli/run.
export const run = {
  run() {
    if (loop) loop();
  },
};
