-- Which front end's agent hall runs the live matches (agent matches and
-- games against people) when several `arbiter serve` share a database:
-- one row, held under a lease that its holder renews; the others forward
-- those requests to `url`, proving who they are with `secret`.
CREATE TABLE hall_leader (
    id            INTEGER PRIMARY KEY,
    hall          TEXT NOT NULL,
    url           TEXT NOT NULL,
    secret        TEXT NOT NULL,
    held_until_ms INTEGER NOT NULL
);
