//! Othello positions on bitboards: legal moves, flips, passes, game end.

use super::{Color, Mode};

/// A square number, `row * size + column`, 0-based from a1.
pub type Square = u8;

/// One ply: a disc placed on a square, or a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// Place a disc on this square.
    Place(Square),
    /// Pass (only legal when no placement is).
    Pass,
}

impl Move {
    /// The number bots use: the square, or -1 for a pass.
    pub fn code(self) -> i32 {
        match self {
            Move::Place(square) => i32::from(square),
            Move::Pass => -1,
        }
    }
}

/// Why a move cannot be played in a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// The game is over; nobody moves.
    #[error("the game is over")]
    GameOver,
    /// A pass while a placement is legal.
    #[error("cannot pass: {0} legal move(s) exist")]
    PassWithMoves(usize),
    /// A square outside the board.
    #[error("square {0} is off the board")]
    OffBoard(Square),
    /// An octagon corner square.
    #[error("{0} is a blocked square")]
    Blocked(String),
    /// An occupied square.
    #[error("{0} is occupied")]
    Occupied(String),
    /// Reversi's centre phase: only the four centre squares.
    #[error("{0} is not a centre square: the four centre squares come first in reversi")]
    NotCentre(String),
    /// Reversi: this colour has placed all 32 discs.
    #[error("all 32 discs are placed: the only move is a pass")]
    NoDiscsLeft,
    /// A placement that brackets no opponent line.
    #[error("{0} flips nothing")]
    FlipsNothing(String),
}

/// Bit masks of one board size (and of octagon's blocked corners).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    size: u8,
    playable: u128,
    not_first_col: u128,
    not_last_col: u128,
    full: u128,
}

const fn geometry(size: u8, blocked: &[u8]) -> Geometry {
    let n = size as u32;
    let full: u128 = if n * n == 128 {
        u128::MAX
    } else {
        (1u128 << (n * n)) - 1
    };
    let mut first_col = 0u128;
    let mut last_col = 0u128;
    let mut row = 0;
    while row < n {
        first_col |= 1u128 << (row * n);
        last_col |= 1u128 << (row * n + n - 1);
        row += 1;
    }
    let mut playable = full;
    let mut i = 0;
    while i < blocked.len() {
        playable &= !(1u128 << blocked[i]);
        i += 1;
    }
    Geometry {
        size,
        playable,
        not_first_col: full & !first_col,
        not_last_col: full & !last_col,
        full,
    }
}

/// Octagon's blocked corner squares, in the order the spec lists them.
pub const OCTAGON_BLOCKED: [Square; 12] = [0, 1, 10, 8, 9, 19, 80, 90, 91, 89, 98, 99];

static EIGHT: Geometry = geometry(8, &[]);
static TEN: Geometry = geometry(10, &[]);
static OCTAGON: Geometry = geometry(10, &OCTAGON_BLOCKED);

const CENTRE_8: u128 = (1 << 27) | (1 << 28) | (1 << 35) | (1 << 36);

/// Discs one colour may place in reversi.
pub const REVERSI_DISCS: u16 = 32;

impl Geometry {
    fn of(mode: Mode) -> &'static Geometry {
        match mode {
            Mode::Std | Mode::Anti | Mode::Reversi => &EIGHT,
            Mode::Grand => &TEN,
            Mode::Octagon => &OCTAGON,
        }
    }

    /// Shifts every disc one step in direction `dir` (0..8), dropping discs
    /// that would leave the board or wrap around an edge.
    #[inline(always)]
    fn shift(&self, bits: u128, dir: usize) -> u128 {
        let n = u32::from(self.size);
        match dir {
            0 => (bits << 1) & self.not_first_col,       // east
            1 => (bits >> 1) & self.not_last_col,        // west
            2 => (bits << n) & self.full,                // north
            3 => bits >> n,                              // south
            4 => (bits << (n + 1)) & self.not_first_col, // north-east
            5 => (bits << (n - 1)) & self.not_last_col,  // north-west
            6 => (bits >> (n - 1)) & self.not_first_col, // south-east
            _ => (bits >> (n + 1)) & self.not_last_col,  // south-west
        }
    }

    /// Squares where `own` may place a disc that flips some of `opp`.
    #[inline]
    fn moves(&self, own: u128, opp: u128) -> u128 {
        if self.size == 8 {
            // 8×8 boards fit a u64, whose shifts are single instructions
            // everywhere (u128 shifts are helper calls on wasm32).
            return u128::from(eight::moves(own as u64, opp as u64));
        }
        let empty = self.playable & !(own | opp);
        let steps = self.size - 3;
        let mut moves = 0;
        for dir in 0..8 {
            let mut line = self.shift(own, dir) & opp;
            for _ in 0..steps {
                line |= self.shift(line, dir) & opp;
            }
            moves |= self.shift(line, dir) & empty;
        }
        moves
    }

    /// Discs of `opp` flipped by `own` placing on `square`.
    #[inline]
    fn flips(&self, own: u128, opp: u128, square: Square) -> u128 {
        if self.size == 8 {
            return u128::from(eight::flips(own as u64, opp as u64, square));
        }
        let start = square_bit(square);
        let mut flips = 0;
        for dir in 0..8 {
            let mut line = 0;
            let mut cursor = self.shift(start, dir);
            while cursor & opp != 0 {
                line |= cursor;
                cursor = self.shift(cursor, dir);
            }
            if cursor & own != 0 {
                flips |= line;
            }
        }
        flips
    }
}

/// The 8×8 board on u64 bitboards: the same shifts and masks as
/// [`Geometry`] for size 8 (no 8×8 mode blocks a square).
mod eight {
    use super::Square;

    const NOT_FIRST_COL: u64 = 0xfefe_fefe_fefe_fefe;
    const NOT_LAST_COL: u64 = 0x7f7f_7f7f_7f7f_7f7f;

    #[inline(always)]
    fn shift(bits: u64, dir: usize) -> u64 {
        match dir {
            0 => (bits << 1) & NOT_FIRST_COL,
            1 => (bits >> 1) & NOT_LAST_COL,
            2 => bits << 8,
            3 => bits >> 8,
            4 => (bits << 9) & NOT_FIRST_COL,
            5 => (bits << 7) & NOT_LAST_COL,
            6 => (bits >> 7) & NOT_FIRST_COL,
            _ => (bits >> 9) & NOT_LAST_COL,
        }
    }

    /// Squares where `own` may place a disc that flips some of `opp`.
    #[inline]
    pub(super) fn moves(own: u64, opp: u64) -> u64 {
        let empty = !(own | opp);
        let mut moves = 0;
        for dir in 0..8 {
            let mut line = shift(own, dir) & opp;
            for _ in 0..5 {
                line |= shift(line, dir) & opp;
            }
            moves |= shift(line, dir) & empty;
        }
        moves
    }

    /// Discs of `opp` flipped by `own` placing on `square`.
    #[inline]
    pub(super) fn flips(own: u64, opp: u64, square: Square) -> u64 {
        let start = 1u64 << square;
        let mut flips = 0;
        for dir in 0..8 {
            let mut line = 0;
            let mut cursor = shift(start, dir);
            while cursor & opp != 0 {
                line |= cursor;
                cursor = shift(cursor, dir);
            }
            if cursor & own != 0 {
                flips |= line;
            }
        }
        flips
    }
}

/// A legal Othello position: discs, the colour to move and discs placed.
///
/// Positions are small `Copy` values; [`Position::play`] returns a new one and
/// leaves the old untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    mode: Mode,
    discs: [u128; 2],
    to_move: Color,
    placed: [u16; 2],
}

impl Position {
    /// The mode's starting position: four centre discs, or an empty board in
    /// reversi. Black moves first.
    pub fn start(mode: Mode) -> Position {
        let size = mode.board_size();
        let bit = |name: &str| square_bit(super::notation::parse_square(name, size).unwrap_or(0));
        let (black, white) = match mode {
            Mode::Reversi => (0, 0),
            Mode::Std | Mode::Anti => (bit("e4") | bit("d5"), bit("d4") | bit("e5")),
            Mode::Grand | Mode::Octagon => (bit("f5") | bit("e6"), bit("e5") | bit("f6")),
        };
        Position {
            mode,
            discs: [black, white],
            to_move: Color::Black,
            placed: [0, 0],
        }
    }

    /// Builds a position from a board (`size²` cells: 0 empty, 1 black,
    /// 2 white), the colour to move and the discs placed so far (defaults to
    /// the discs on the board). Checks cell values and blocked squares.
    pub fn from_board(mode: Mode, board: &[u8], to_move: Color, placed: Option<[u16; 2]>) -> Result<Position, String> {
        let geometry = Geometry::of(mode);
        let cells = usize::from(geometry.size) * usize::from(geometry.size);
        if board.len() != cells {
            return Err(format!("board must have {cells} cells, not {}", board.len()));
        }
        let mut discs = [0u128; 2];
        for (square, &cell) in board.iter().enumerate() {
            let bit = square_bit(square as Square);
            match cell {
                0 => {}
                1 | 2 if geometry.playable & bit == 0 => {
                    return Err(format!("square {square} is blocked but holds a disc"));
                }
                1 => discs[0] |= bit,
                2 => discs[1] |= bit,
                other => return Err(format!("cell {square} is {other}: cells are 0, 1 or 2")),
            }
        }
        let counted = [discs[0].count_ones() as u16, discs[1].count_ones() as u16];
        Ok(Position {
            mode,
            discs,
            to_move,
            placed: placed.unwrap_or(counted),
        })
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The colour to move.
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// Discs placed so far by black and white (opening included).
    pub fn placed(&self) -> [u16; 2] {
        self.placed
    }

    /// Bitboards of black's and white's discs (bit = square number).
    pub fn discs(&self) -> [u128; 2] {
        self.discs
    }

    /// Disc counts of black and white.
    pub fn counts(&self) -> [u32; 2] {
        [self.discs[0].count_ones(), self.discs[1].count_ones()]
    }

    /// The board as bots see it: `size²` cells, 0 empty, 1 black, 2 white.
    pub fn board(&self) -> Vec<u8> {
        let cells = u32::from(self.mode.board_size()).pow(2);
        (0..cells)
            .map(|square| {
                let bit = square_bit(square as Square);
                if self.discs[0] & bit != 0 {
                    1
                } else if self.discs[1] & bit != 0 {
                    2
                } else {
                    0
                }
            })
            .collect()
    }

    /// Legal squares of `color` as a bitboard (empty: that colour must pass).
    pub fn legal_bits_for(&self, color: Color) -> u128 {
        let geometry = Geometry::of(self.mode);
        let me = color.index();
        if self.mode == Mode::Reversi {
            if self.placed[me] >= REVERSI_DISCS {
                return 0;
            }
            let occupied = self.discs[0] | self.discs[1];
            if occupied & CENTRE_8 != CENTRE_8 {
                return CENTRE_8 & !occupied;
            }
        }
        geometry.moves(self.discs[me], self.discs[1 - me])
    }

    /// Legal squares of the colour to move as a bitboard.
    pub fn legal_bits(&self) -> u128 {
        self.legal_bits_for(self.to_move)
    }

    /// Legal squares of the colour to move, ascending.
    pub fn legal_squares(&self) -> Vec<Square> {
        squares(self.legal_bits()).collect()
    }

    /// Whether the game is over: neither colour can place a disc.
    pub fn is_over(&self) -> bool {
        self.legal_bits() == 0 && self.legal_bits_for(self.to_move.other()) == 0
    }

    /// Whether the colour to move must pass (it has no placement but the
    /// game goes on).
    pub fn must_pass(&self) -> bool {
        self.legal_bits() == 0 && !self.is_over()
    }

    /// Plays `mv` for the colour to move, checking it first.
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMove> {
        let legal = self.legal_bits();
        let size = self.mode.board_size();
        match mv {
            Move::Pass => {
                if legal != 0 {
                    return Err(IllegalMove::PassWithMoves(legal.count_ones() as usize));
                }
                if self.is_over() {
                    return Err(IllegalMove::GameOver);
                }
                Ok(self.pass_unchecked())
            }
            Move::Place(square) => {
                if u32::from(square) < u32::from(size).pow(2) && legal & square_bit(square) != 0 {
                    return Ok(self.place_unchecked(square));
                }
                Err(self.why_illegal(square))
            }
        }
    }

    fn why_illegal(&self, square: Square) -> IllegalMove {
        let size = self.mode.board_size();
        if u32::from(square) >= u32::from(size).pow(2) {
            return IllegalMove::OffBoard(square);
        }
        let name = super::notation::square_name(square, size);
        let bit = square_bit(square);
        let geometry = Geometry::of(self.mode);
        if self.is_over() {
            IllegalMove::GameOver
        } else if geometry.playable & bit == 0 {
            IllegalMove::Blocked(name)
        } else if (self.discs[0] | self.discs[1]) & bit != 0 {
            IllegalMove::Occupied(name)
        } else if self.mode == Mode::Reversi && self.placed[self.to_move.index()] >= REVERSI_DISCS {
            IllegalMove::NoDiscsLeft
        } else if self.mode == Mode::Reversi && self.legal_bits() & !CENTRE_8 == 0 && self.legal_bits() != 0 {
            IllegalMove::NotCentre(name)
        } else {
            IllegalMove::FlipsNothing(name)
        }
    }

    /// Passes without checking that a pass is legal.
    pub fn pass_unchecked(&self) -> Position {
        Position {
            to_move: self.to_move.other(),
            ..*self
        }
    }

    /// Places a disc on a square known to be legal, flipping what it
    /// brackets.
    pub fn place_unchecked(&self, square: Square) -> Position {
        let me = self.to_move.index();
        let bit = square_bit(square);
        let mut discs = self.discs;
        let occupied = discs[0] | discs[1];
        let centre_phase = self.mode == Mode::Reversi && occupied & CENTRE_8 != CENTRE_8;
        let flips = if centre_phase {
            0
        } else {
            Geometry::of(self.mode).flips(discs[me], discs[1 - me], square)
        };
        discs[me] |= bit | flips;
        discs[1 - me] &= !flips;
        let mut placed = self.placed;
        placed[me] += 1;
        Position {
            mode: self.mode,
            discs,
            to_move: self.to_move.other(),
            placed,
        }
    }

    /// Counts the leaves of the move tree `depth` plies deep. A pass is one
    /// ply; a game that ends above `depth` is one leaf.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let legal = self.legal_bits();
        if legal == 0 {
            let passed = self.pass_unchecked();
            if passed.legal_bits() == 0 {
                return 1;
            }
            return passed.perft(depth - 1);
        }
        if depth == 1 {
            return u64::from(legal.count_ones());
        }
        squares(legal)
            .map(|square| self.place_unchecked(square).perft(depth - 1))
            .sum()
    }
}

/// The bitboard with only `square` set (`square` < 128).
///
/// Prefer it to `1u128 << square`: a u128 shift by a variable amount is a
/// helper call on wasm32, while this is two u64 instructions everywhere.
#[inline(always)]
pub fn square_bit(square: Square) -> u128 {
    if square < 64 {
        u128::from(1u64 << square)
    } else {
        u128::from(1u64 << (square - 64)) << 64
    }
}

/// The squares set in a bitboard, ascending.
pub fn squares(mut bits: u128) -> impl Iterator<Item = Square> {
    std::iter::from_fn(move || {
        if bits == 0 {
            None
        } else {
            let square = bits.trailing_zeros() as Square;
            bits &= bits - 1;
            Some(square)
        }
    })
}
