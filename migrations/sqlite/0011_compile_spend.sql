-- Compile time each account spends, for its hourly allowance: one row per
-- uploaded version, written with the upload as the worst case its kind may
-- take (reserved before anything compiles) and settled by the checker to
-- the CPU time the compile took (0 when the module was found compiled).
CREATE TABLE compile_spend (
    version_id INTEGER PRIMARY KEY REFERENCES versions(id),
    user_id    INTEGER NOT NULL REFERENCES users(id),
    at_ms      INTEGER NOT NULL,
    cpu_ms     INTEGER NOT NULL
);
CREATE INDEX compile_spend_by_user ON compile_spend (user_id, at_ms);
