//! The ladder's nouns as types: ids, and the statuses and kinds the
//! database stores as text.
//!
//! A status read from the database that is not one of its variants is an
//! [`Error::Internal`] (a schema and a binary that disagree), never a
//! silent default.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<i64> for $name {
            fn from(id: i64) -> $name {
                $name(id)
            }
        }
    };
}

id!(
    /// A user's id.
    UserId
);
id!(
    /// A bot's id (a name owned by a user; its code is in versions).
    BotId
);
id!(
    /// A version's id: one uploaded module of a bot.
    VersionId
);
id!(
    /// A match's id (two games, sides swapped).
    MatchId
);
id!(
    /// A tournament's id.
    TournamentId
);

/// A ladder's id: its game and mode as the `ladders` table names it, e.g.
/// `othello:std`. Whether the referee knows it is decided when a match is
/// played (a match on a ladder it does not know fails, unrated).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LadderId(String);

impl LadderId {
    /// The ladder called `name`.
    pub fn new(name: impl Into<String>) -> LadderId {
        LadderId(name.into())
    }

    /// The name stored in the database and shown in the API.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LadderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for LadderId {
    fn from(name: &str) -> LadderId {
        LadderId::new(name)
    }
}

impl From<String> for LadderId {
    fn from(name: String) -> LadderId {
        LadderId(name)
    }
}

impl From<arbiter_games::Variant> for LadderId {
    fn from(variant: arbiter_games::Variant) -> LadderId {
        LadderId(variant.to_string())
    }
}

macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every variant, in the order of the lifecycle.
            pub const ALL: &[$name] = &[$($name::$variant),+];

            /// The text stored in the database and shown in the API.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;

            fn from_str(text: &str) -> Result<$name, Error> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(Error::Internal(format!(concat!("unknown ", $what, " {:?} in the database"), other))),
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = Error;

            fn try_from(text: String) -> Result<$name, Error> {
                text.parse()
            }
        }
    };
}

text_enum!(
    /// Where a match is in its life: queued → running → finished or failed
    /// (a running match whose worker died goes back to queued). An agent
    /// bot's challenge is pending → running → finished or aborted, or ends
    /// rejected or expired.
    MatchStatus, "match status" {
        /// An agent bot's challenge, waiting for its opponent to accept.
        Pending = "pending",
        /// Waiting for a worker.
        Queued = "queued",
        /// Claimed by a worker that holds its lease.
        Running = "running",
        /// Played; its result and replay are stored.
        Finished = "finished",
        /// The host failed it on every attempt: no result, never rated.
        Failed = "failed",
        /// A remote match stopped before a result (nobody moved first in
        /// time, or the server stopped): never rated.
        Aborted = "aborted",
        /// A challenge its opponent declined.
        Rejected = "rejected",
        /// A challenge not answered in time.
        Expired = "expired",
    }
);

text_enum!(
    /// Why a match was played: only ranked matches (scheduled by the ladder
    /// between active versions) move ratings.
    MatchKind, "match kind" {
        /// Scheduled by the ladder.
        Ranked = "ranked",
        /// Asked for by a user.
        Challenge = "challenge",
        /// Part of a tournament.
        Tournament = "tournament",
    }
);

text_enum!(
    /// Where an uploaded version is: checking → active or rejected; active
    /// → retired when a newer version passes or the bot is retired.
    VersionStatus, "version status" {
        /// Uploaded; its check has not finished.
        Checking = "checking",
        /// Passed its check; plays on its ladders.
        Active = "active",
        /// Replaced or retired; its matches and rating stay.
        Retired = "retired",
        /// Failed its check; never plays.
        Rejected = "rejected",
        /// A remote bot whose URL failed a whole match: out of the
        /// scheduler until its owner posts the URL again.
        Paused = "paused",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_text() {
        for &status in MatchStatus::ALL {
            assert_eq!(status.as_str().parse::<MatchStatus>().ok(), Some(status));
            assert_eq!(serde_json::to_value(status).ok(), Some(status.as_str().into()));
        }
        for &kind in MatchKind::ALL {
            assert_eq!(kind.as_str().parse::<MatchKind>().ok(), Some(kind));
        }
        for &status in VersionStatus::ALL {
            assert_eq!(status.to_string().parse::<VersionStatus>().ok(), Some(status));
        }
    }

    #[test]
    fn unknown_text_is_an_error_not_a_default() {
        assert!(matches!("done".parse::<MatchStatus>(), Err(Error::Internal(_))));
        assert!(matches!("Ranked".parse::<MatchKind>(), Err(Error::Internal(_))));
        assert!(VersionStatus::try_from(String::new()).is_err());
    }

    #[test]
    fn a_ladder_id_is_its_name_in_text_and_json() {
        let ladder = LadderId::from("othello:std");
        assert_eq!(ladder.to_string(), "othello:std");
        assert_eq!(serde_json::to_string(&ladder).ok().as_deref(), Some("\"othello:std\""));
        let variant: arbiter_games::Variant = "othello:std".parse().expect("a known ladder");
        assert_eq!(LadderId::from(variant), ladder);
    }

    #[test]
    fn ids_serialise_as_bare_numbers() {
        assert_eq!(serde_json::to_string(&MatchId(7)).ok().as_deref(), Some("7"));
    }
}
