-- Games people play against bots from the site: one game, never rated.
-- `bots.people_play` is the owner's consent (on by default). A game row is
-- written when the game starts and again when it ends; a row left
-- `running` by a process that stopped is marked `aborted` at the next start.
ALTER TABLE bots ADD COLUMN people_play INTEGER NOT NULL DEFAULT 1;
CREATE TABLE people_games (
    id            INTEGER PRIMARY KEY,
    version_id    INTEGER NOT NULL REFERENCES versions(id),
    variant       TEXT NOT NULL,             -- e.g. tictactoe:standard, othello:std
    person        TEXT NOT NULL,             -- the guest name or the user's name
    user_id       INTEGER REFERENCES users(id),
    person_side   INTEGER NOT NULL,          -- 0: the person moves first
    clock_ms      INTEGER,                   -- the person's clock; NULL untimed
    seed          INTEGER NOT NULL,
    random_opening INTEGER NOT NULL DEFAULT 0,
    status        TEXT NOT NULL,             -- running | finished | aborted
    winner        TEXT,                      -- person | bot | NULL (draw or unfinished)
    reason        TEXT,                      -- the finish reason, or why aborted
    replay_sha256 TEXT,
    stderr        TEXT,                      -- the bot's stderr, for its owner
    created_ms    INTEGER NOT NULL,
    finished_ms   INTEGER
);
CREATE INDEX people_games_version ON people_games (version_id, id);
CREATE INDEX people_games_status ON people_games (status);
