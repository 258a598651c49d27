// The native I/O shim, for `node bot.js`: Node's stdin, stdout and stderr,
// read and written synchronously. build.sh puts io-wasi.js in its place in
// the component, which exports the same names.

import { readSync, writeSync } from 'node:fs';
import { getRandomValues } from 'node:crypto';

const chunk = Buffer.alloc(65536);
const nap = new Int32Array(new SharedArrayBuffer(4));

// What stdin has now, waiting for some when it has none; null at its end.
export function readChunk() {
  for (;;) {
    try {
      const n = readSync(0, chunk, 0, chunk.length, null);
      return n === 0 ? null : new Uint8Array(chunk.subarray(0, n));
    } catch (e) {
      if (e.code === 'EAGAIN') {
        Atomics.wait(nap, 0, 0, 1); // a non-blocking stdin (a terminal): try again in 1 ms
        continue;
      }
      if (e.code === 'EOF') return null;
      throw e;
    }
  }
}

function writeAll(fd, bytes) {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

// Writes bytes to stdout; they are out of the process when it returns.
export function writeOut(bytes) {
  writeAll(1, bytes);
}

// Writes bytes to stderr.
export function writeErr(bytes) {
  writeAll(2, bytes);
}

// Seed bytes: those `arbiter play` hands a native bot in ARBITER_RANDOM (the
// first bytes its random stream would give it in the sandbox), else random.
export function seedBytes(n) {
  const hex = process.env.ARBITER_RANDOM;
  if (hex && /^([0-9a-f]{2})+$/i.test(hex) && hex.length >= 2 * n) {
    return Uint8Array.from(hex.slice(0, 2 * n).match(/../g), (h) => parseInt(h, 16));
  }
  return getRandomValues(new Uint8Array(n));
}

// Milliseconds of a monotonic clock.
export function nowMs() {
  return performance.now();
}

// Starts the bot's loop: natively, at once.
export function start(loop) {
  loop();
}

// wasi:cli/run's entry point in the component; natively nothing calls it.
export const run = { run() {} };
