-- Agent bots (FlipSight's transport): a remote Othello bot that calls the
-- server's agent API with a bot token, instead of a module or a URL.
-- `versions.agent` marks such a version (its remote_url is NULL, its
-- sha256 that of "agent:" and the bot's name); only the agent hall plays
-- it. A bot has at most one live token, stored hashed like API tokens.
ALTER TABLE versions ADD COLUMN agent BIGINT NOT NULL DEFAULT 0;
CREATE TABLE bot_tokens (
    bot_id     BIGINT PRIMARY KEY REFERENCES bots(id),
    token_hash TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL
);
