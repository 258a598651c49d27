//! Matches as rows of the pages' match lists ([`MatchRow`]): the lists the
//! home, ladder and tournament pages show (the paged lists of `/matches`,
//! bot and user pages come from [`super::match_list`]), and the mapping of one match
//! to its row. The matches come from the ladder ([`arbiter_ladder::matches`])
//! as the same typed rows the API serialises, so a page and `/api/matches`
//! always agree.

use super::view::{MatchRow, Side, When, signed};
use crate::server::AppState;
use arbiter_ladder::error::Result;
use arbiter_ladder::matches::{self, MatchFilter, MatchSummary};
use arbiter_ladder::model::{MatchStatus, TournamentId};

/// A match as a row of a list: who played, who won, the score, and when it
/// last moved (finished, else started, else created).
pub fn match_row(m: &MatchSummary) -> MatchRow {
    let finished = m.status == MatchStatus::Finished;
    let side = |i: usize| -> Side {
        let p = &m.participants[i];
        Side {
            bot: p.bot.clone(),
            version: p.version,
            won: finished && m.winner == Some(i as i64),
            delta: match (p.rating_before, p.rating_after) {
                (Some(before), Some(after)) => signed(after - before),
                _ => String::new(),
            },
        }
    };
    let (a, b) = (side(0), side(1));
    let score = match m.scores {
        [Some(x), Some(y)] => format!("{x}–{y}"),
        _ => String::new(),
    };
    let result = match (m.status, m.winner) {
        (MatchStatus::Finished, Some(0)) => format!("{} wins", a.bot),
        (MatchStatus::Finished, Some(_)) => format!("{} wins", b.bot),
        (MatchStatus::Finished, None) => "draw".to_owned(),
        (other, _) => other.as_str().to_owned(),
    };
    MatchRow {
        id: m.id.0,
        ladder: m.ladder.clone(),
        kind: m.kind.as_str().to_owned(),
        status: m.status.as_str().to_owned(),
        a,
        b,
        score,
        result,
        when: When::at(m.finished_ms.or(m.started_ms).unwrap_or(m.created_ms)),
    }
}

/// The newest matches, optionally of one ladder (`""` = all), one status
/// (`""` = all) and one tournament (`0` = any), as rows.
pub async fn list(state: &AppState, ladder: &str, status: &str, tournament: i64, limit: i64) -> Result<Vec<MatchRow>> {
    let filter = MatchFilter {
        ladder: (!ladder.is_empty()).then(|| ladder.to_owned()),
        status: match status {
            "" => None,
            status => Some(status.parse()?),
        },
        tournament: (tournament != 0).then_some(TournamentId(tournament)),
        ..MatchFilter::newest(limit)
    };
    Ok(matches::list(&state.core.db, &filter)
        .await?
        .iter()
        .map(match_row)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_ladder::matches::Participant;
    use arbiter_ladder::model::{MatchId, MatchKind, VersionId};

    fn summary(status: MatchStatus, winner: Option<i64>) -> MatchSummary {
        let side = |bot: &str, before: f64, after: f64| Participant {
            version_id: VersionId(1),
            bot: bot.into(),
            version: 2,
            rating_before: Some(before),
            rating_after: Some(after),
        };
        MatchSummary {
            id: MatchId(7),
            ladder: "othello:std".into(),
            kind: MatchKind::Ranked,
            status,
            created_ms: 1_000,
            started_ms: Some(2_000),
            finished_ms: None,
            participants: [side("a", 1500.0, 1510.0), side("b", 1500.0, 1490.0)],
            winner,
            scores: [Some(50), Some(78)],
            reasons: None,
            error: None,
            attempts: 1,
            tournament_id: None,
            replay: None,
        }
    }

    #[test]
    fn match_rows_name_the_winner() {
        let row = match_row(&summary(MatchStatus::Finished, Some(1)));
        assert_eq!(row.result, "b wins");
        assert_eq!(row.score, "50–78");
        assert!(row.b.won && !row.a.won);
        assert_eq!(row.a.delta, "+10");
        assert_eq!(row.when.iso, When::at(2_000).iso);
        let queued = match_row(&summary(MatchStatus::Queued, None));
        assert_eq!((queued.result.as_str(), queued.status.as_str()), ("queued", "queued"));
        assert_eq!(match_row(&summary(MatchStatus::Finished, None)).result, "draw");
    }
}
