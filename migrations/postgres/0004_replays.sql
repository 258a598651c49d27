-- Replays kept in the database: when the blob store is a local folder,
-- a worker writes each finished match's zstd-compressed replay here, in
-- the transaction that records the match, instead of as one more file in
-- the folder (creating a file per match cost the ladder more CPU than the
-- rest of its storage work). Keyed like a blob, by the SHA-256 of the
-- compressed bytes (matches.replay_sha256); a retried match that produces
-- the same replay stores it once. With object storage configured, replays
-- stay in the object store and this table is not used.
CREATE TABLE replays (
    sha256 TEXT PRIMARY KEY,
    zstd   BYTEA NOT NULL
);
