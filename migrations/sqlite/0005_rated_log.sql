-- A ladder's rated log in rating order: the whole-log fit reads it, and
-- checks whether it is still up to date with the ladder's newest
-- `rated_seq` (an index lookup, where counting the log scanned it: 265 ms
-- per leaderboard at 1 000 000 matches).
CREATE INDEX matches_rated_log ON matches (ladder, rated, rated_seq);
