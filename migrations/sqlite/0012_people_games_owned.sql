-- Games against bots belong to people: a signed-in person's games are
-- found by their account (resumed from any browser, listed under "My
-- games"), and a guest's game is claimed when its key (kept in the guest's
-- cookie; only its hash is stored) comes back with a signed-in session.
ALTER TABLE people_games ADD COLUMN key_hash TEXT;
CREATE INDEX people_games_user ON people_games (user_id, id);
