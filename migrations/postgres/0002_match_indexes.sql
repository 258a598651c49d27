-- Indexes for the lists of matches by status (live and recent matches) and
-- by tournament: without them those lists scanned every match.
CREATE INDEX matches_status ON matches (status, id);
CREATE INDEX matches_tournament ON matches (tournament_id, id);
