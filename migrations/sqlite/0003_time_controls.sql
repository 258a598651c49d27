-- Time controls: every ladder has one (per-move cap and per-game bank in
-- virtual milliseconds, and fuel per virtual millisecond), and every match
-- records the one it is played with when it is queued, so changing a
-- ladder's control affects only matches queued after the change. The
-- server inserts a row for each ladder it knows at start, with the
-- defaults in code (arbiter_games::Variant::default_budget).
CREATE TABLE ladders (
    name        TEXT PRIMARY KEY,
    turn_ms     INTEGER NOT NULL,
    bank_ms     INTEGER NOT NULL,
    fuel_per_ms INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
);

ALTER TABLE matches ADD COLUMN turn_ms INTEGER;
ALTER TABLE matches ADD COLUMN bank_ms INTEGER;
ALTER TABLE matches ADD COLUMN fuel_per_ms INTEGER;

-- Matches queued before this migration were played, or will be, with the
-- defaults of that time: the games' spec budgets at 10 000 000 fuel per ms.
UPDATE matches SET
    turn_ms = CASE WHEN ladder LIKE 'tictactoe%' THEN 1000 ELSE 10000 END,
    bank_ms = CASE WHEN ladder LIKE 'tictactoe%' THEN 5000 ELSE 60000 END,
    fuel_per_ms = 10000000;

-- The claim takes the next match by priority (highest first), then id: an
-- index in that order finds it without sorting the whole queue (a
-- tournament can queue over a thousand matches at once). It replaces
-- matches_queue (status, priority, id), which could not give that order.
CREATE INDEX matches_claim ON matches (status, priority DESC, id);
DROP INDEX matches_queue;
