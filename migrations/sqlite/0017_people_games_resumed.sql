-- Games against people survive a restart: every move so far (a JSON array
-- of move names, both sides', passes as "--"; NULL on rows from before),
-- saved at every move of the person before it is acknowledged, with the
-- person's clock left and the time spent on the open turn when the game
-- was released; the client its place is counted under; the process
-- holding it and until when (NULL and 0 once released at a stop, for the
-- next process to resume); and the referee's time control at its start,
-- so that the bot replays the same moves.
ALTER TABLE people_games ADD COLUMN moves TEXT;
ALTER TABLE people_games ADD COLUMN clock_left_ms INTEGER;
ALTER TABLE people_games ADD COLUMN turn_spent_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE people_games ADD COLUMN client TEXT;
ALTER TABLE people_games ADD COLUMN hall TEXT;
ALTER TABLE people_games ADD COLUMN held_until_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE people_games ADD COLUMN turn_ms INTEGER;
ALTER TABLE people_games ADD COLUMN bank_ms INTEGER;
ALTER TABLE people_games ADD COLUMN fuel_per_ms INTEGER;
CREATE INDEX people_games_hall ON people_games (hall);
