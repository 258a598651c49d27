// The component's entry (build.sh bundles it, with io-wasi.js in io.js's
// place): importing bot.js sets the bot up, which componentize-js runs at
// build time and keeps in the snapshot; wasi:cli/run's run() then plays it.
import './bot.js';
import { run as wasiRun } from './io.js';

export const run = wasiRun;
