-- Remote bots: a version is either an uploaded module (remote_url NULL) or
-- a bot that is an HTTP or WebSocket server on its owner's machine, at
-- remote_url; its sha256 is then that of the URL's text and its size 0.
-- Remote versions play only on remote ladders (names starting `remote:`).
ALTER TABLE versions ADD COLUMN remote_url TEXT;
