//! Small view models and formatting shared by the pages: times, ratings,
//! ladder titles and match rows.

use arbiter_ladder::db::now_ms;

/// A ladder's title: `othello:std` → `Othello · standard`, with the game's
/// title and the mode's label from the games' catalogue; a name that is no
/// ladder is shown as it is.
pub fn ladder_title(ladder: &str) -> String {
    match arbiter_ladder::ladders::parse_any(ladder) {
        Ok((variant, arbiter_ladder::ladders::Clock::Fuel)) => {
            format!("{} · {}", variant.title(), variant.mode_label())
        }
        Ok((variant, arbiter_ladder::ladders::Clock::Wall)) => {
            format!(
                "{} · {} — Remote bots · wall clock",
                variant.title(),
                variant.mode_label()
            )
        }
        Err(_) => ladder.to_owned(),
    }
}

/// `1623 ± 188` (rating ± 2·RD), rounded.
pub fn rating_text(rating: f64, deviation: f64) -> String {
    format!("{:.0} ± {:.0}", rating, 2.0 * deviation)
}

/// A rating rounded to a whole number.
pub fn whole(value: f64) -> String {
    format!("{value:.0}")
}

/// A signed change: `+12`, `−7`, `±0`.
pub fn signed(delta: f64) -> String {
    let rounded = delta.round();
    if rounded > 0.0 {
        format!("+{rounded:.0}")
    } else if rounded < 0.0 {
        format!("−{:.0}", -rounded)
    } else {
        "±0".to_owned()
    }
}

/// How long ago `ms` was, in words: `just now`, `5 min ago`, `3 h ago`,
/// `2 days ago`.
pub fn ago(ms: i64) -> String {
    let seconds = (now_ms() - ms).max(0) / 1000;
    match seconds {
        0..=9 => "just now".to_owned(),
        10..=59 => format!("{seconds} s ago"),
        60..=3599 => format!("{} min ago", seconds / 60),
        3600..=86_399 => format!("{} h ago", seconds / 3600),
        _ if seconds < 2 * 86_400 => "yesterday".to_owned(),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

/// `ms` as an ISO 8601 UTC time, for `<time datetime>`.
pub fn iso(ms: i64) -> String {
    let seconds = ms.div_euclid(1000);
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `ms` as a readable UTC date and time: `2025-03-04 17:05 UTC`.
pub fn date(ms: i64) -> String {
    let iso = iso(ms);
    format!("{} {} UTC", &iso[..10], &iso[11..16])
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard
/// Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A time shown on a page: relative text with the exact time for
/// `<time datetime>` and the tooltip.
#[derive(Clone, Debug, Default)]
pub struct When {
    /// `5 min ago`.
    pub ago: String,
    /// ISO 8601.
    pub iso: String,
    /// `2025-03-04 17:05 UTC`.
    pub date: String,
}

impl When {
    /// The time `ms` (Unix milliseconds).
    pub fn at(ms: i64) -> When {
        When {
            ago: ago(ms),
            iso: iso(ms),
            date: date(ms),
        }
    }
}

/// One side of a match row.
#[derive(Clone, Debug, Default)]
pub struct Side {
    /// Bot name.
    pub bot: String,
    /// Version number.
    pub version: i64,
    /// Whether this side won.
    pub won: bool,
    /// Rating change in this match, e.g. `+12`, when rated.
    pub delta: String,
}

/// A match as a row of a list.
#[derive(Clone, Debug, Default)]
pub struct MatchRow {
    /// Match id.
    pub id: i64,
    /// Ladder name.
    pub ladder: String,
    /// ranked | challenge | tournament.
    pub kind: String,
    /// queued | running | finished | failed.
    pub status: String,
    /// Participant 0.
    pub a: Side,
    /// Participant 1.
    pub b: Side,
    /// `72–56`, or empty before the end.
    pub score: String,
    /// `draw`, `NAME wins`, or the status.
    pub result: String,
    /// When it was created, or finished if it has.
    pub when: When,
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_games::Variant;

    #[test]
    fn iso_times_are_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(iso(1_700_000_000_123), "2023-11-14T22:13:20Z");
        assert_eq!(date(1_700_000_000_123), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn ratings_read_as_rating_plus_minus_two_deviations() {
        assert_eq!(rating_text(1500.0, 350.0), "1500 ± 700");
        assert_eq!(signed(12.4), "+12");
        assert_eq!(signed(-7.6), "−8");
        assert_eq!(signed(0.2), "±0");
    }

    #[test]
    fn ladder_titles_come_from_the_games_catalogue() {
        for variant in Variant::ALL {
            let title = ladder_title(&variant.to_string());
            assert_eq!(title, format!("{} · {}", variant.title(), variant.mode_label()));
        }
        let std = Variant::Othello(arbiter_games::othello::Mode::Std);
        assert_eq!(ladder_title(&std.to_string()), "Othello · standard");
        assert_eq!(ladder_title("chess:blitz"), "chess:blitz");
    }
}
