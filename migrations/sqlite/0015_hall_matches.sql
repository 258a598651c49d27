-- The agent hall's matches in flight, saved at every change so that a new
-- process resumes them (and any front end can take over one whose holder
-- stopped): the match as JSON (boards are replayed from its moves), the
-- number of its latest snapshot (a write never replaces a later one), the
-- hall holding it and until when (NULL and 0 once released at a stop), and
-- the holder's hall clock at its last write, from which the next holder
-- rebases the match's deadlines so that no clock runs while nobody holds it.
CREATE TABLE hall_matches (
    match_id      INTEGER PRIMARY KEY REFERENCES matches(id),
    saves         INTEGER NOT NULL,
    state         TEXT NOT NULL,
    hall          TEXT,
    held_until_ms INTEGER NOT NULL,
    hall_ms       INTEGER NOT NULL
);
CREATE INDEX hall_matches_by_hall ON hall_matches (hall);
