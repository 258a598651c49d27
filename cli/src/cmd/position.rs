//! `arbiter position`: print the request a bot would receive, to make test
//! positions.

use anyhow::{Context, bail};
use arbiter_games::othello::{self, Color, Move, Othello, PASS_NAMES, Position};
use arbiter_games::tictactoe::{self, TicTacToe};
use arbiter_games::{Game, RequestContext, Side, Variant};

/// Prints the request JSON the side to move receives in a position, reached
/// from the start (or the seeded opening) by a list of moves, or given as a
/// board.
#[derive(clap::Args)]
#[command(after_help = format!(
    "Examples:\n  \
     arbiter position othello                       # the first mode's start, black to move\n  \
     arbiter position othello --moves 'f5 d6 c3'    # or f5d6c3, or 37,43,26; pass: -- or pass\n  \
     arbiter position {:<29} # after the 12-disc opening of seed 42\n  \
     arbiter position othello --board '[0,0,...]' --color 2\n  \
     arbiter position tictactoe --moves '1-1 0-0'\n  \
     arbiter position skirmish                      # side 1's observation at tick 0\n  \
     arbiter position skirmish --replay match.json --game 2 --tick 140 --side 2",
    format!("{} --seed 42", Variant::Othello(othello::Mode::Grand))
))]
pub struct Args {
    #[arg(help = crate::cmd::games::variant_help())]
    game: Variant,
    /// Moves from the start (or from the seeded opening with --seed).
    #[arg(long, conflicts_with = "board")]
    moves: Option<String>,
    /// A board as JSON: size² cells, 0 empty, 1 black, 2 white (Othello only).
    #[arg(long, requires = "color")]
    board: Option<String>,
    /// The colour to move with --board: 1 (black) or 2 (white).
    #[arg(long)]
    color: Option<u8>,
    /// Start from the opening a match with this seed plays (Othello).
    #[arg(long, conflicts_with = "board")]
    seed: Option<u64>,
    /// Skirmish: the replay whose game is re-simulated up to --tick.
    #[arg(long)]
    replay: Option<std::path::PathBuf>,
    /// Skirmish: which game of the replay, 1 or 2.
    #[arg(long = "game", value_name = "N", default_value_t = 1, requires = "replay")]
    leg: u8,
    /// Skirmish: the tick whose observation is printed.
    #[arg(long, default_value_t = 0)]
    tick: u32,
    /// Skirmish: the side that receives it, 1 or 2.
    #[arg(long, default_value_t = 1)]
    side: u8,
}

/// Runs `arbiter position`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let budget = args.game.default_budget();
    let context = RequestContext {
        match_id: 0,
        game_index: 0,
        participants: [0, 1],
        remaining_ms: budget.bank_ms,
        budget_ms: budget.turn_ms,
    };
    let line = match args.game {
        Variant::TicTacToe => tictactoe_request(&args, &context)?,
        Variant::Othello(mode) => othello_request(&args, mode, &context)?,
        Variant::Skirmish => skirmish_observation(&args)?,
    };
    println!("{line}");
    Ok(())
}

/// The observation a skirmish side received at a tick: of a replay's game,
/// re-simulated (every digest checked on the way), or of the start.
fn skirmish_observation(args: &Args) -> anyhow::Result<String> {
    use arbiter_referee::skirmish::{SkirmishRecord, tick_budget_ms};
    let side = match args.side {
        1 => Side::First,
        2 => Side::Second,
        other => bail!("--side must be 1 or 2, not {other}"),
    };
    let Some(path) = &args.replay else {
        if args.tick != 0 {
            bail!("--tick needs --replay: without one there is only the start (tick 0)");
        }
        let map = arbiter_referee::skirmish::map_of(Variant::Skirmish).map_err(anyhow::Error::msg)?;
        let game = arbiter_games::skirmish::Skirmish::new(map, args.seed.unwrap_or(0));
        return Ok(game
            .observation(side, arbiter_games::skirmish::deadline_ms(0))
            .to_line());
    };
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let replay =
        arbiter_referee::Replay::from_json(&bytes).with_context(|| format!("cannot read {}", path.display()))?;
    let settings = arbiter_referee::verify::settings_of(&replay)?;
    if settings.variant != Variant::Skirmish {
        bail!(
            "{} is a replay of {}, not of skirmish",
            path.display(),
            settings.variant
        );
    }
    let index = usize::from(args.leg.saturating_sub(1));
    let game = replay
        .games
        .get(index)
        .filter(|_| args.leg >= 1)
        .with_context(|| format!("--game must be 1 or 2 (the replay has {})", replay.games.len()))?;
    let record = SkirmishRecord::from_game(game).context("the replay's game has no skirmish record")?;
    let observation = record
        .game
        .observation_at(args.tick, side, |tick| tick_budget_ms(&settings, tick))
        .with_context(|| format!("cannot re-simulate game {} to tick {}", args.leg, args.tick))?;
    Ok(observation.to_line())
}

fn othello_request(args: &Args, mode: othello::Mode, context: &RequestContext) -> anyhow::Result<String> {
    let mut leg = if let Some(board) = &args.board {
        let cells: Vec<u8> = serde_json::from_str(board).context("--board must be a JSON array of 0, 1 and 2")?;
        let color = args
            .color
            .and_then(Color::from_code)
            .context("--color must be 1 (black) or 2 (white)")?;
        Othello::from_position(Position::from_board(mode, &cells, color, None).map_err(anyhow::Error::msg)?)
    } else if let Some(seed) = args.seed {
        Othello::new(mode, seed)
    } else {
        Othello::from_position(Position::start(mode))
    };
    let size = mode.board_size();
    let moves = parse_othello_moves(args.moves.as_deref().unwrap_or(""), size)?;
    for (n, mv) in moves.into_iter().enumerate() {
        let side = leg.position().to_move().side();
        if let Err(error) = leg.apply(&[(side, mv)], 0) {
            bail!("move {} ({}) is illegal: {error}", n + 1, othello::move_name(mv, size));
        }
    }
    if leg.position().is_over() {
        bail!("the game is over: nobody is to move");
    }
    Ok(leg.request_for(context).to_line())
}

/// Reads moves written as names (`f5 d6`, `f5d6`), numbers (`37,43`) or passes.
fn parse_othello_moves(text: &str, size: u8) -> anyhow::Result<Vec<Move>> {
    let mut moves = Vec::new();
    for token in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        if PASS_NAMES.iter().any(|p| token.eq_ignore_ascii_case(p)) || token == "-1" {
            moves.push(Move::Pass);
        } else if let Ok(number) = token.parse::<u8>() {
            moves.push(Move::Place(number));
        } else {
            moves.extend(split_names(token, size)?);
        }
    }
    Ok(moves)
}

/// Splits a transcript like `f5d6c3--e3` into moves.
fn split_names(token: &str, size: u8) -> anyhow::Result<Vec<Move>> {
    let mut moves = Vec::new();
    let mut rest = token;
    while !rest.is_empty() {
        if let Some(tail) = rest.strip_prefix("--") {
            moves.push(Move::Pass);
            rest = tail;
            continue;
        }
        let end = rest
            .char_indices()
            .skip(1)
            .find(|(_, c)| !c.is_ascii_digit())
            .map_or(rest.len(), |(i, _)| i);
        let name = &rest[..end];
        match othello::parse_square(name, size) {
            Some(square) => moves.push(Move::Place(square)),
            None => bail!("{name:?} is not a square name on the {size}x{size} board"),
        }
        rest = &rest[end..];
    }
    Ok(moves)
}

fn tictactoe_request(args: &Args, context: &RequestContext) -> anyhow::Result<String> {
    if args.board.is_some() || args.seed.is_some() {
        bail!("tictactoe takes only --moves (cells like 1-1)");
    }
    let mut game = TicTacToe::new();
    game.apply(
        &[
            (Side::First, tictactoe::Action::Hello),
            (Side::Second, tictactoe::Action::Hello),
        ],
        0,
    )
    .map_err(anyhow::Error::msg)?;
    let text = args.moves.as_deref().unwrap_or("");
    for (n, token) in text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        let cell = tictactoe::parse_cell(token)
            .with_context(|| format!("move {} ({token:?}) is not a cell like 1-1", n + 1))?;
        let side = game.position().to_move();
        if let Err(error) = game.apply(&[(side, tictactoe::Action::Mark(cell))], 0) {
            bail!("move {} ({token}) is illegal: {error}", n + 1);
        }
    }
    match game.to_act().first() {
        Some(&side) => Ok(game.request(side, context)),
        None => bail!("the game is over: nobody is to move"),
    }
}
