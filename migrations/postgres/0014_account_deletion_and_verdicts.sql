-- Accounts that can be deleted, and each ladder's verdict of an upload's
-- check (issue 42, item 5). Kept in step with ../sqlite/0014_account_deletion_and_verdicts.sql.
--
-- A deleted account keeps its row, anonymised (name "deleted user", a
-- name_key no name can take, no password), so its bots' matches, replays
-- and its opponents' ratings stay intact; deleted_ms says when.
ALTER TABLE users ADD COLUMN deleted_ms BIGINT;
-- JSON list of {ladder, passed, reason} for a checked version: the ladders
-- whose smoke game it passed are the ones it plays; NULL before the check
-- (and for versions checked before this migration).
ALTER TABLE versions ADD COLUMN verdicts TEXT;
