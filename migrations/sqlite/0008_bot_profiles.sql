-- A bot's profile, changed by its owner: a bio (plain text, at most 500
-- characters), a photo (the blob key of its PNG thumbnail), whether the
-- scheduler pairs it automatically, and how many matches it plays at once
-- (remote bots; FlipSight's "concurrent games", default 2).
ALTER TABLE bots ADD COLUMN bio TEXT NOT NULL DEFAULT '';
ALTER TABLE bots ADD COLUMN photo_sha256 TEXT;
ALTER TABLE bots ADD COLUMN auto_match INTEGER NOT NULL DEFAULT 1;
ALTER TABLE bots ADD COLUMN concurrent_matches INTEGER NOT NULL DEFAULT 2;
