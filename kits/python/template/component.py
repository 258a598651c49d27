"""The component's entry (build.sh: componentize-py ... componentize
component): wasi:cli/run's `run` plays bot.py's bot. Everything imported
here is imported at build time and kept in the component's snapshot, so
start-up costs no fuel; state made at import time is the same in every
game (see arbiter.rng for randomness)."""

from wit_world import exports

import bot


class Run(exports.Run):
    def run(self) -> None:
        bot.main()
