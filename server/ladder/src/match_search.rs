//! Finding matches: the match list of the site and of `GET /api/matches`,
//! filtered by ladder, status, bot, owner, result, finish reason (faults
//! among them), tournament and date, and paged by keyset ([`Cursor`]).
//!
//! # Guarantees
//!
//! - Newest (highest id) first. A page is read after a cursor, never at an
//!   offset: matches queued meanwhile appear only on the newest page, so
//!   paging on never shows a match twice or skips one.
//! - Every value is bound; a filter that cannot be read is an
//!   [`Error::Invalid`] naming it, an unknown bot or user an
//!   [`Error::NotFound`] (both before any query runs).
//! - The rows are [`MatchSummary`]s, as every other read of a match.

use crate::db::Db;
use crate::error::{Error, Result};
use crate::matches::{MatchSummary, SELECT};
use crate::model::{BotId, MatchId, MatchStatus, TournamentId, UserId};
use arbiter_games::FinishReason;

/// Which way a [`Cursor`] pages from its match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Matches older (smaller id) than the cursor's.
    Older,
    /// Matches newer (larger id) than the cursor's.
    Newer,
}

/// Where a page starts: the matches older or newer than one match. Written
/// as an opaque token (`?after=`); clients pass it back as they got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// The match the page starts next to (not itself on the page).
    pub id: MatchId,
    /// Which way from it.
    pub direction: Direction,
}

impl Cursor {
    /// The matches older than `id`.
    pub fn older(id: MatchId) -> Cursor {
        Cursor {
            id,
            direction: Direction::Older,
        }
    }

    /// The matches newer than `id`.
    pub fn newer(id: MatchId) -> Cursor {
        Cursor {
            id,
            direction: Direction::Newer,
        }
    }

    /// The token: `o` or `n`, then the id in base 36.
    pub fn token(self) -> String {
        let mut digits = Vec::new();
        let mut n = u64::try_from(self.id.0).unwrap_or(0);
        loop {
            digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
            n /= 36;
            if n == 0 {
                break;
            }
        }
        let head = match self.direction {
            Direction::Older => 'o',
            Direction::Newer => 'n',
        };
        std::iter::once(head).chain(digits.into_iter().rev()).collect()
    }

    /// Reads a token of [`Cursor::token`] (spaces around it aside);
    /// anything else is an [`Error::Invalid`].
    pub fn parse(token: &str) -> Result<Cursor> {
        let token = token.trim();
        let bad = || {
            Error::Invalid(format!(
                "after: {token:?} is not a cursor of this list (use the older or newer cursor a page gave)"
            ))
        };
        let direction = match token.as_bytes().first() {
            Some(b'o') => Direction::Older,
            Some(b'n') => Direction::Newer,
            _ => return Err(bad()),
        };
        let digits = &token[1..];
        if digits.is_empty()
            || digits.len() > 13
            || !digits.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        {
            return Err(bad());
        }
        let id = i64::from_str_radix(digits, 36).map_err(|_| bad())?;
        if id < 0 {
            return Err(bad());
        }
        Ok(Cursor {
            id: MatchId(id),
            direction,
        })
    }
}

/// A result to list, for [`MatchQuery::result`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultFilter {
    /// Won by the bot (or a bot of the user) of the query; without one,
    /// won by anyone (decisive).
    Win,
    /// Lost by the bot (or a bot of the user) of the query; without one,
    /// lost by anyone (decisive).
    Loss,
    /// Finished without a winner.
    Draw,
    /// Finished with a winner.
    Decisive,
}

impl ResultFilter {
    /// Every result, in the order forms list them.
    pub const ALL: [ResultFilter; 4] = [
        ResultFilter::Win,
        ResultFilter::Loss,
        ResultFilter::Draw,
        ResultFilter::Decisive,
    ];

    /// Its name in queries: `win`, `loss`, `draw`, `decisive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResultFilter::Win => "win",
            ResultFilter::Loss => "loss",
            ResultFilter::Draw => "draw",
            ResultFilter::Decisive => "decisive",
        }
    }

    /// Reads [`ResultFilter::as_str`]; anything else is an
    /// [`Error::Invalid`].
    pub fn parse(text: &str) -> Result<ResultFilter> {
        ResultFilter::ALL
            .into_iter()
            .find(|r| r.as_str() == text)
            .ok_or_else(|| Error::Invalid(format!("result is one of win, loss, draw, decisive, not {text:?}")))
    }
}

/// A finish reason to list, for [`MatchQuery::reason`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasonFilter {
    /// A game of the match ended for this reason.
    Reason(FinishReason),
    /// A game of the match ended by a side's fault (timeout, illegal move,
    /// bad reply or crash).
    Fault,
}

/// The reasons a match list may filter by, in the order forms list them.
pub const REASONS: [FinishReason; 10] = [
    FinishReason::Discs,
    FinishReason::Line,
    FinishReason::Draw,
    FinishReason::Elimination,
    FinishReason::Score,
    FinishReason::Timeout,
    FinishReason::IllegalMove,
    FinishReason::BadReply,
    FinishReason::Crash,
    FinishReason::Resigned,
];

impl ReasonFilter {
    /// Its name in queries: `fault`, or the reason's (`timeout`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonFilter::Fault => "fault",
            ReasonFilter::Reason(reason) => reason.as_str(),
        }
    }

    /// Reads [`ReasonFilter::as_str`]; anything else is an
    /// [`Error::Invalid`].
    pub fn parse(text: &str) -> Result<ReasonFilter> {
        if text == "fault" {
            return Ok(ReasonFilter::Fault);
        }
        REASONS
            .into_iter()
            .find(|r| r.as_str() == text)
            .map(ReasonFilter::Reason)
            .ok_or_else(|| {
                let names: Vec<&str> = REASONS.iter().map(|r| r.as_str()).collect();
                Error::Invalid(format!("reason is fault or one of {}, not {text:?}", names.join(", ")))
            })
    }
}

/// Reads a day `YYYY-MM-DD` (UTC) as the Unix milliseconds of its start;
/// anything else (`2025-02-30` too) is an [`Error::Invalid`] naming `what`.
pub fn day_start_ms(what: &str, text: &str) -> Result<i64> {
    let bad = || Error::Invalid(format!("{what} is a day written YYYY-MM-DD, not {text:?}"));
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else { return Err(bad()) };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || !text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(bad());
    }
    let (year, month, day): (i64, u32, u32) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if day == 0 || day > days_in_month {
        return Err(bad());
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400_000)
}

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// Which matches [`search`] returns; each filter given narrows the list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchQuery {
    /// Only this ladder (its canonical name).
    pub ladder: Option<String>,
    /// Only this status.
    pub status: Option<MatchStatus>,
    /// Only matches a version of this bot plays in (either side).
    pub bot: Option<BotId>,
    /// Only matches a bot of this user plays in (either side).
    pub owner: Option<UserId>,
    /// Only this result: a win or a loss is the bot's (else a bot of the
    /// owner's); without either, both are a decided match.
    pub result: Option<ResultFilter>,
    /// Only matches with a game that ended this way.
    pub reason: Option<ReasonFilter>,
    /// Only this tournament's matches.
    pub tournament: Option<TournamentId>,
    /// Only matches whose time (finished, else started, else queued: the
    /// time the lists show) is at or after this (Unix ms).
    pub from_ms: Option<i64>,
    /// … and before this (Unix ms).
    pub until_ms: Option<i64>,
    /// Only matches with a smaller id than this (a filter, apart from
    /// the page).
    pub below: Option<MatchId>,
    /// Where the page starts; `None`: the newest.
    pub after: Option<Cursor>,
    /// At most this many (at least 1).
    pub limit: i64,
}

/// A page of [`search`]: its matches, newest first, and the cursors of the
/// pages beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchPage {
    /// The matches, newest first.
    pub matches: Vec<MatchSummary>,
    /// The next page of older matches, if there are any.
    pub older: Option<Cursor>,
    /// The page of newer matches, if this is not the newest.
    pub newer: Option<Cursor>,
}

/// The filters of a match list as written (the API's query, the site's
/// form), before they are read: blank text is no filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// A ladder's name.
    pub ladder: Option<String>,
    /// A status: queued, running, finished, failed.
    pub status: Option<String>,
    /// A bot's name (any case).
    pub bot: Option<String>,
    /// A user's name (any case).
    pub user: Option<String>,
    /// `win`, `loss`, `draw` or `decisive`.
    pub result: Option<String>,
    /// A finish reason, or `fault`.
    pub reason: Option<String>,
    /// The first day, `YYYY-MM-DD` (UTC).
    pub from: Option<String>,
    /// The last day, `YYYY-MM-DD` (UTC), included.
    pub to: Option<String>,
}

impl Written {
    /// Whether any filter is given.
    pub fn any(&self) -> bool {
        [
            &self.ladder,
            &self.status,
            &self.bot,
            &self.user,
            &self.result,
            &self.reason,
            &self.from,
            &self.to,
        ]
        .iter()
        .any(|value| given(value).is_some())
    }
}

/// `value` trimmed, unless it is absent or blank.
fn given(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// The query `written` means (no page; limit 1 until the caller sets
/// one): an [`Error::Invalid`] naming the first filter that cannot be
/// read, an [`Error::NotFound`] for an unknown bot or user. Filters that
/// no match can meet (a first day after the last) are no error: the list
/// is empty.
pub async fn resolve(db: &Db, written: &Written) -> Result<MatchQuery> {
    let ladder = given(&written.ladder)
        .map(|l| crate::ladders::canonical(&l))
        .transpose()?;
    let status = given(&written.status)
        .map(|status| {
            status.parse::<MatchStatus>().map_err(|_| {
                Error::Invalid(format!(
                    "status is one of queued, running, finished, failed, not {status:?}"
                ))
            })
        })
        .transpose()?;
    let bot = match given(&written.bot) {
        Some(name) => Some(crate::matches::bot_named(db, &name).await?),
        None => None,
    };
    let owner = match given(&written.user) {
        Some(name) => Some(
            crate::accounts::profile(db, &name)
                .await
                .map_err(|error| match error {
                    Error::NotFound(_) => Error::not_found(format!("user {name:?}")),
                    other => other,
                })?
                .id,
        ),
        None => None,
    };
    let result = given(&written.result).map(|r| ResultFilter::parse(&r)).transpose()?;
    let reason = given(&written.reason).map(|r| ReasonFilter::parse(&r)).transpose()?;
    let from_ms = given(&written.from).map(|day| day_start_ms("from", &day)).transpose()?;
    let until_ms = given(&written.to)
        .map(|day| day_start_ms("to", &day).map(|start| start + DAY_MS))
        .transpose()?;
    Ok(MatchQuery {
        ladder,
        status,
        bot,
        owner,
        result,
        reason,
        from_ms,
        until_ms,
        limit: 1,
        ..MatchQuery::default()
    })
}

/// A value bound to a query.
enum Bind {
    Int(i64),
    Text(String),
}

/// The page of matches `query` selects.
pub async fn search(db: &Db, query: &MatchQuery) -> Result<MatchPage> {
    let limit = query.limit.max(1);
    let mut conditions: Vec<String> = Vec::new();
    let mut binds: Vec<Bind> = Vec::new();
    let mut bind = |value: Bind| -> String {
        binds.push(value);
        format!("${}", binds.len())
    };
    if let Some(ladder) = &query.ladder {
        let p = bind(Bind::Text(ladder.clone()));
        // Without a status, `p = ''` keeps SQLite from taking the
        // (ladder, status, id) index and sorting the whole ladder: the
        // newest are read in id order instead (see `matches::list`).
        conditions.push(if query.status.is_some() {
            format!("m.ladder = {p}")
        } else {
            format!("({p} = '' OR m.ladder = {p})")
        });
    }
    if let Some(status) = query.status {
        let p = bind(Bind::Text(status.as_str().to_owned()));
        conditions.push(format!("m.status = {p}"));
    }
    // The versions whose matches are listed and whose results count.
    let mut sides: Option<String> = None;
    if let Some(owner) = query.owner {
        let p = bind(Bind::Int(owner.0));
        let versions = format!("SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.owner_id = {p}");
        conditions.push(either_side(&versions));
        sides = Some(versions);
    }
    if let Some(bot) = query.bot {
        let p = bind(Bind::Int(bot.0));
        let versions = format!("SELECT id FROM versions WHERE bot_id = {p}");
        conditions.push(either_side(&versions));
        sides = Some(versions);
    }
    match (query.result, &sides) {
        (Some(ResultFilter::Win), Some(s)) => conditions.push(format!(
            "((m.winner = 0 AND m.a_version IN ({s})) OR (m.winner = 1 AND m.b_version IN ({s})))"
        )),
        (Some(ResultFilter::Loss), Some(s)) => conditions.push(format!(
            "((m.winner = 1 AND m.a_version IN ({s})) OR (m.winner = 0 AND m.b_version IN ({s})))"
        )),
        // Without a bot or a user, a win is someone's and a loss someone
        // else's: the match was decided.
        (Some(ResultFilter::Win | ResultFilter::Loss), None) => conditions.push("m.winner IS NOT NULL".into()),
        (Some(ResultFilter::Draw), _) => conditions.push("(m.status = 'finished' AND m.winner IS NULL)".into()),
        (Some(ResultFilter::Decisive), _) => conditions.push("m.winner IS NOT NULL".into()),
        (None, _) => {}
    }
    match query.reason {
        // The `reasons` column is JSON written by one serialiser, keys in
        // name order without spaces (`GameFinish::column`); the reason's
        // name is one of ours, so it holds no wildcard that matters.
        Some(ReasonFilter::Reason(reason)) => {
            let p = bind(Bind::Text(format!("%\"reason\":\"{}\"%", reason.as_str())));
            conditions.push(format!("m.reasons LIKE {p}"));
        }
        Some(ReasonFilter::Fault) => {
            let p = bind(Bind::Text("%\"faulted_participant\":0%".into()));
            let q = bind(Bind::Text("%\"faulted_participant\":1%".into()));
            conditions.push(format!("(m.reasons LIKE {p} OR m.reasons LIKE {q})"));
        }
        None => {}
    }
    if let Some(tournament) = query.tournament {
        let p = bind(Bind::Int(tournament.0));
        conditions.push(format!("m.tournament_id = {p}"));
    }
    let shown = "COALESCE(m.finished_ms, m.started_ms, m.created_ms)";
    if let Some(from) = query.from_ms {
        let p = bind(Bind::Int(from));
        conditions.push(format!("{shown} >= {p}"));
    }
    if let Some(until) = query.until_ms {
        let p = bind(Bind::Int(until));
        conditions.push(format!("{shown} < {p}"));
    }
    if let Some(below) = query.below {
        let p = bind(Bind::Int(below.0));
        conditions.push(format!("m.id < {p}"));
    }
    let newer = matches!(query.after, Some(c) if c.direction == Direction::Newer);
    if let Some(cursor) = query.after {
        let p = bind(Bind::Int(cursor.id.0));
        conditions.push(match cursor.direction {
            Direction::Older => format!("m.id < {p}"),
            Direction::Newer => format!("m.id > {p}"),
        });
    }
    let p = bind(Bind::Int(limit.saturating_add(1)));
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conditions.join(" AND "))
    };
    let order = if newer { "ASC" } else { "DESC" };
    let sql = format!("{SELECT} {filter} ORDER BY m.id {order} LIMIT {p}");
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
    for value in binds {
        statement = match value {
            Bind::Int(n) => statement.bind(n),
            Bind::Text(text) => statement.bind(text),
        };
    }
    let rows = statement.fetch_all(&db.pool).await?;
    let mut matches = rows.iter().map(MatchSummary::from_row).collect::<Result<Vec<_>>>()?;
    let more = matches.len() > usize::try_from(limit).unwrap_or(usize::MAX);
    matches.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    if newer {
        matches.reverse();
    }
    let (first, last) = (matches.first().map(|m| m.id), matches.last().map(|m| m.id));
    let (older, newer_page) = match query.after {
        None => (more.then(|| last.map(Cursor::older)).flatten(), None),
        Some(cursor) if cursor.direction == Direction::Older => (
            more.then(|| last.map(Cursor::older)).flatten(),
            // The cursor's match (or those above it) is newer: the page
            // before this one, from its first match (or from the cursor's
            // own match when this page is empty).
            Some(first.map_or(Cursor::newer(MatchId(cursor.id.0 - 1)), Cursor::newer)),
        ),
        Some(cursor) => (
            Some(last.map_or(Cursor::older(MatchId(cursor.id.0.saturating_add(1))), Cursor::older)),
            more.then(|| first.map(Cursor::newer)).flatten(),
        ),
    };
    Ok(MatchPage {
        matches,
        older,
        newer: newer_page,
    })
}

/// The condition "a version of `versions` plays either side", through the
/// per-side indexes (an `OR` over both sides scans every match).
fn either_side(versions: &str) -> String {
    format!(
        "m.id IN (SELECT id FROM matches WHERE a_version IN ({versions}) \
         UNION SELECT id FROM matches WHERE b_version IN ({versions}))"
    )
}

/// The PostgreSQL test database helper the integration tests use.
#[cfg(test)]
#[path = "../tests/support/pg.rs"]
#[allow(dead_code, reason = "shared with the integration tests, which use more of it")]
pub(crate) mod pg;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_and_refuse_anything_else() {
        for cursor in [
            Cursor::older(MatchId(1)),
            Cursor::newer(MatchId(1_234_567)),
            Cursor::older(MatchId(i64::MAX)),
            Cursor::newer(MatchId(0)),
        ] {
            assert_eq!(Cursor::parse(&cursor.token()).expect("reads back"), cursor);
        }
        assert_eq!(Cursor::older(MatchId(36)).token(), "o10");
        for bad in ["", "o", "x12", "o-1", "oZZ", "n1y2p0ij32e8e8", "o%", "nzzzzzzzzzzzzz"] {
            assert!(matches!(Cursor::parse(bad), Err(Error::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn days_are_utc_and_must_exist() {
        assert_eq!(day_start_ms("from", "1970-01-01").expect("day"), 0);
        assert_eq!(day_start_ms("from", "2000-02-29").expect("day"), 951_782_400_000);
        assert_eq!(day_start_ms("from", "2023-11-14").expect("day"), 1_699_920_000_000);
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-1-01",
            "20231114",
            "",
            "2023-11-14T00",
            "+023-11-14",
            "2023-00-10",
        ] {
            assert!(matches!(day_start_ms("from", bad), Err(Error::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn filters_read_their_names() {
        for r in ResultFilter::ALL {
            assert_eq!(ResultFilter::parse(r.as_str()).expect("reads"), r);
        }
        assert!(ResultFilter::parse("won").is_err());
        assert_eq!(ReasonFilter::parse("fault").expect("fault"), ReasonFilter::Fault);
        for reason in REASONS {
            assert_eq!(
                ReasonFilter::parse(reason.as_str()).expect("reads"),
                ReasonFilter::Reason(reason)
            );
        }
        assert!(ReasonFilter::parse("timeout%").is_err());
    }

    use super::pg;

    /// Users 1 (bots Alpha and Gamma) and 2 (bot beta), one version each;
    /// 30 matches: odd ids Alpha against beta (Alpha wins ids divisible by
    /// 3), even ids beta against Gamma on `othello:anti` (drawn), match 7
    /// lost by a timeout, match 30 running; match `id` finished at
    /// `id * 1000` ms.
    async fn fixture(db: &Db) {
        let mut sql = vec![
            "INSERT INTO users (id, name, name_key, password_hash, created_ms) VALUES (1, 'u1', 'u1', '', 0), (2, 'u2', 'u2', '', 0)".to_owned(),
            "INSERT INTO bots (id, owner_id, name, name_key, created_ms) VALUES (1, 1, 'Alpha', 'alpha', 0), (2, 2, 'beta', 'beta', 0), (3, 1, 'Gamma', 'gamma', 0)".to_owned(),
            "INSERT INTO versions (id, bot_id, number, sha256, size, status, ladders, created_ms) VALUES \
             (10, 1, 1, 'x', 1, 'active', '[]', 0), (20, 2, 1, 'y', 1, 'active', '[]', 0), (30, 3, 1, 'z', 1, 'active', '[]', 0)".to_owned(),
        ];
        for id in 1..=30i64 {
            let (ladder, a, b, winner) = if id % 2 == 1 {
                ("othello:std", 10, 20, if id % 3 == 0 { "0" } else { "1" })
            } else {
                ("othello:anti", 20, 30, "NULL")
            };
            let reasons = if id == 7 {
                r#"[{"faulted_participant":0,"faulted_side":0,"game":0,"reason":"timeout"},{"faulted_participant":null,"faulted_side":null,"game":1,"reason":"discs"}]"#
            } else {
                r#"[{"faulted_participant":null,"faulted_side":null,"game":0,"reason":"discs"}]"#
            };
            let (status, winner, finished) = if id == 30 {
                ("running", "NULL".to_owned(), "NULL".to_owned())
            } else {
                ("finished", winner.to_owned(), (id * 1000).to_string())
            };
            sql.push(format!(
                "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, status, created_ms, attempts, started_ms, \
                 finished_ms, winner, score_a, score_b, reasons) VALUES \
                 ({id}, '{ladder}', {a}, {b}, 1, 'ranked', '{status}', {c}, 1, {c}, {finished}, {winner}, 1, 1, '{reasons}')",
                c = id * 1000 - 500,
            ));
        }
        for statement in sql {
            sqlx::query(sqlx::AssertSqlSafe(statement.clone()))
                .execute(&db.pool)
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    }

    fn ids(page: &MatchPage) -> Vec<i64> {
        page.matches.iter().map(|m| m.id.0).collect()
    }

    async fn searches_filter_and_page(db: &Db) {
        fixture(db).await;
        let all = MatchQuery {
            limit: 12,
            ..MatchQuery::default()
        };
        // Paging older, then newer again, gives the same pages.
        let first = search(db, &all).await.expect("first page");
        assert_eq!(ids(&first), (19..=30).rev().collect::<Vec<_>>());
        assert_eq!(first.newer, None);
        let second = search(
            db,
            &MatchQuery {
                after: first.older,
                ..all.clone()
            },
        )
        .await
        .expect("second page");
        assert_eq!(ids(&second), (7..=18).rev().collect::<Vec<_>>());
        let third = search(
            db,
            &MatchQuery {
                after: second.older,
                ..all.clone()
            },
        )
        .await
        .expect("third page");
        assert_eq!(ids(&third), (1..=6).rev().collect::<Vec<_>>());
        assert_eq!(third.older, None, "the last page has no older page");
        let back = search(
            db,
            &MatchQuery {
                after: third.newer,
                ..all.clone()
            },
        )
        .await
        .expect("back a page");
        assert_eq!(ids(&back), ids(&second));
        let top = search(
            db,
            &MatchQuery {
                after: back.newer,
                ..all.clone()
            },
        )
        .await
        .expect("back to the top");
        assert_eq!(ids(&top), ids(&first));
        assert_eq!(top.newer, None, "the newest page has no newer page");

        // A match queued meanwhile is on the newest page only.
        sqlx::query(
            "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, status, created_ms, attempts) \
             VALUES (31, 'othello:std', 10, 20, 1, 'ranked', 'queued', 40000, 0)",
        )
        .execute(&db.pool)
        .await
        .expect("a new match");
        let again = search(
            db,
            &MatchQuery {
                after: first.older,
                ..all.clone()
            },
        )
        .await
        .expect("second page again");
        assert_eq!(ids(&again), ids(&second), "an insert does not move a later page");

        let bot = crate::matches::bot_named(db, "alpha").await.expect("alpha");
        let of = |q: MatchQuery| async move { ids(&search(db, &q).await.expect("search")) };
        let base = MatchQuery {
            limit: 50,
            ..MatchQuery::default()
        };
        assert_eq!(
            of(MatchQuery {
                bot: Some(bot),
                result: Some(ResultFilter::Win),
                ..base.clone()
            })
            .await,
            [27, 21, 15, 9, 3]
        );
        assert_eq!(
            of(MatchQuery {
                bot: Some(BotId(2)),
                result: Some(ResultFilter::Win),
                from_ms: Some(10_000),
                until_ms: Some(20_000),
                ..base.clone()
            })
            .await,
            [19, 17, 13, 11],
            "beta's wins finished in [10 s, 20 s)"
        );
        assert_eq!(
            of(MatchQuery {
                owner: Some(UserId(1)),
                result: Some(ResultFilter::Draw),
                until_ms: Some(7_000),
                ..base.clone()
            })
            .await,
            [6, 4, 2],
            "user 1's draws (Gamma's)"
        );
        assert_eq!(
            of(MatchQuery {
                owner: Some(UserId(1)),
                result: Some(ResultFilter::Loss),
                ladder: Some("othello:std".into()),
                reason: Some(ReasonFilter::Fault),
                ..base.clone()
            })
            .await,
            [7]
        );
        assert_eq!(
            of(MatchQuery {
                reason: Some(ReasonFilter::Reason(FinishReason::Timeout)),
                ..base.clone()
            })
            .await,
            [7]
        );
        assert_eq!(
            of(MatchQuery {
                ladder: Some("othello:anti".into()),
                status: Some(MatchStatus::Running),
                ..base.clone()
            })
            .await,
            [30]
        );
        assert_eq!(
            of(MatchQuery {
                result: Some(ResultFilter::Decisive),
                from_ms: Some(25_000),
                ..base.clone()
            })
            .await,
            [29, 27, 25]
        );
        assert_eq!(
            of(MatchQuery {
                result: Some(ResultFilter::Win),
                from_ms: Some(25_000),
                ..base.clone()
            })
            .await,
            [29, 27, 25],
            "without a bot or a user, a win is a decided match"
        );
        assert_eq!(
            of(MatchQuery {
                below: Some(MatchId(5)),
                after: Some(Cursor::older(MatchId(3))),
                ..base.clone()
            })
            .await,
            [2, 1]
        );
    }

    #[tokio::test]
    async fn searches_filter_and_page_on_sqlite_and_postgres() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db")).await.expect("database");
        searches_filter_and_page(&db).await;
        if pg::test_pg_url().is_some() {
            let database = pg::PgDatabase::create().await;
            let db = Db::connect(&database.url).await.expect("PostgreSQL");
            searches_filter_and_page(&db).await;
            db.pool.close().await;
        }
    }
}
