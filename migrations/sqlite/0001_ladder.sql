-- The ladder: accounts, bots and versions, matches, ratings, tournaments.
-- Times are Unix milliseconds (INTEGER); JSON is TEXT. Kept in step with
-- ../postgres/0001_ladder.sql.

CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL UNIQUE,       -- lowercase name, for uniqueness
    password_hash TEXT NOT NULL,              -- Argon2 PHC string; '' for the house account
    is_house      INTEGER NOT NULL DEFAULT 0,
    created_ms    INTEGER NOT NULL
);

CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,              -- SHA-256 hex of the cookie value
    user_id    INTEGER NOT NULL REFERENCES users(id),
    csrf       TEXT NOT NULL,                 -- token forms must echo
    expires_ms INTEGER NOT NULL
);

CREATE TABLE api_tokens (
    user_id    INTEGER PRIMARY KEY REFERENCES users(id),  -- one live token per user
    token_hash TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL
);

CREATE TABLE bots (
    id         INTEGER PRIMARY KEY,
    owner_id   INTEGER NOT NULL REFERENCES users(id),
    name       TEXT NOT NULL,
    name_key   TEXT NOT NULL UNIQUE,
    retired    INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL
);

CREATE TABLE versions (
    id         INTEGER PRIMARY KEY,
    bot_id     INTEGER NOT NULL REFERENCES bots(id),
    number     INTEGER NOT NULL,              -- 1, 2, ... per bot
    sha256     TEXT NOT NULL,                 -- of the module bytes (blob key)
    size       INTEGER NOT NULL,
    status     TEXT NOT NULL,                 -- checking | active | retired | rejected
    reason     TEXT,                          -- why rejected, for the author
    stderr     TEXT,                          -- last stderr lines of a failed check
    ladders    TEXT NOT NULL,                 -- JSON array of ladder names, e.g. ["othello:std"]
    created_ms INTEGER NOT NULL,
    checked_ms INTEGER,
    UNIQUE (bot_id, number)
);
CREATE INDEX versions_status ON versions (status);

CREATE TABLE version_ladders (
    version_id INTEGER NOT NULL REFERENCES versions(id),
    ladder     TEXT NOT NULL,
    PRIMARY KEY (version_id, ladder)
);
CREATE INDEX version_ladders_ladder ON version_ladders (ladder);

CREATE TABLE ratings (
    version_id     INTEGER NOT NULL REFERENCES versions(id),
    ladder         TEXT NOT NULL,
    rating         REAL NOT NULL,
    deviation      REAL NOT NULL,
    volatility     REAL NOT NULL,
    wins           INTEGER NOT NULL DEFAULT 0,
    draws          INTEGER NOT NULL DEFAULT 0,
    losses         INTEGER NOT NULL DEFAULT 0,
    last_played_ms INTEGER,
    PRIMARY KEY (version_id, ladder)
);
CREATE INDEX ratings_board ON ratings (ladder, rating);

CREATE TABLE tournaments (
    id               INTEGER PRIMARY KEY,
    ladder           TEXT NOT NULL,
    name             TEXT NOT NULL,
    owner_id         INTEGER NOT NULL REFERENCES users(id),
    matches_per_pair INTEGER NOT NULL,
    created_ms       INTEGER NOT NULL
);

CREATE TABLE tournament_entries (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    version_id    INTEGER NOT NULL REFERENCES versions(id),
    PRIMARY KEY (tournament_id, version_id)
);

CREATE TABLE matches (
    id             INTEGER PRIMARY KEY,
    ladder         TEXT NOT NULL,
    a_version      INTEGER NOT NULL REFERENCES versions(id),   -- participant 0
    b_version      INTEGER NOT NULL REFERENCES versions(id),   -- participant 1
    seed           INTEGER NOT NULL,
    kind           TEXT NOT NULL,             -- ranked | challenge | tournament
    tournament_id  INTEGER REFERENCES tournaments(id),
    priority       INTEGER NOT NULL DEFAULT 0, -- higher is claimed first
    status         TEXT NOT NULL,             -- queued | running | finished | failed
    created_ms     INTEGER NOT NULL,
    claimed_by     TEXT,                      -- worker id holding the lease
    lease_until_ms INTEGER,
    attempts       INTEGER NOT NULL DEFAULT 0,
    started_ms     INTEGER,
    finished_ms    INTEGER,
    winner         INTEGER,                   -- 0, 1, or NULL for a draw / unfinished
    score_a        INTEGER,
    score_b        INTEGER,
    reasons        TEXT,                      -- JSON: finish reason of each game
    replay_sha256  TEXT,                      -- blob key of the zstd replay
    error          TEXT,                      -- why it failed (host side)
    rated          INTEGER NOT NULL DEFAULT 0,
    rated_seq      INTEGER UNIQUE,            -- order ratings were applied in
    a_before       REAL, a_after REAL, b_before REAL, b_after REAL,
    a_rd_after     REAL, b_rd_after REAL
);
CREATE INDEX matches_queue ON matches (status, priority, id);
CREATE INDEX matches_a ON matches (a_version, id);
CREATE INDEX matches_b ON matches (b_version, id);
CREATE INDEX matches_ladder ON matches (ladder, status, id);

CREATE TABLE match_logs (
    match_id    INTEGER NOT NULL REFERENCES matches(id),
    participant INTEGER NOT NULL,
    game        INTEGER NOT NULL,
    stderr      TEXT NOT NULL,
    PRIMARY KEY (match_id, participant, game)
);

-- Rate limits that must hold across processes (sign-in, uploads, challenges).
CREATE TABLE rate_events (
    bucket TEXT NOT NULL,                     -- e.g. 'signin:127.0.0.1'
    at_ms  INTEGER NOT NULL
);
CREATE INDEX rate_events_bucket ON rate_events (bucket, at_ms);
