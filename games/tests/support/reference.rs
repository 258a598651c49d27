//! A deliberately simple reference implementation of the Othello family,
//! written from `shared/spec/othello.md` and nothing else: a mailbox board
//! (one byte per square), lines walked square by square in the 8 directions,
//! no bit tricks. It is slow on purpose and exists to be compared against
//! `arbiter_games::othello::Position` (see `tests/properties.rs`) and as the
//! baseline of `benches/othello.rs`.

#![allow(dead_code, reason = "each includer (tests, bench) uses a different part")]

/// An empty square.
pub const EMPTY: u8 = 0;
/// A black disc (moves first).
pub const BLACK: u8 = 1;
/// A white disc.
pub const WHITE: u8 = 2;
/// An octagon corner square nobody can play (shown as 0 to bots).
const BLOCKED: u8 = 3;

/// Octagon's blocked squares, as the spec lists them.
pub const OCTAGON_BLOCKED: [usize; 12] = [0, 1, 10, 8, 9, 19, 80, 90, 91, 89, 98, 99];

/// Reversi's four centre squares, filled first.
pub const REVERSI_CENTRE: [usize; 4] = [27, 28, 35, 36];

/// Discs one colour may place in reversi.
pub const REVERSI_MAX_PLACED: u32 = 32;

/// The 8 directions as (row step, column step).
const DIRECTIONS: [(i32, i32); 8] = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)];

/// The five modes, by their spec names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Std,
    Anti,
    Grand,
    Octagon,
    Reversi,
}

impl Kind {
    /// Reads a mode name: `std`, `anti`, `grand`, `octagon`, `reversi`.
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "std" => Some(Kind::Std),
            "anti" => Some(Kind::Anti),
            "grand" => Some(Kind::Grand),
            "octagon" => Some(Kind::Octagon),
            "reversi" => Some(Kind::Reversi),
            _ => None,
        }
    }

    /// 8 or 10.
    pub fn size(self) -> usize {
        match self {
            Kind::Std | Kind::Anti | Kind::Reversi => 8,
            Kind::Grand | Kind::Octagon => 10,
        }
    }
}

/// A position: board, colour to move, discs placed per colour.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub kind: Kind,
    pub size: usize,
    /// `size * size` cells: EMPTY, BLACK, WHITE or BLOCKED.
    cells: Vec<u8>,
    /// BLACK or WHITE.
    pub to_move: u8,
    /// Discs placed by black and by white (the 4 start discs do not count).
    pub placed: [u32; 2],
}

/// The other colour.
pub fn opponent(color: u8) -> u8 {
    if color == BLACK { WHITE } else { BLACK }
}

impl Board {
    /// The start of a mode: 4 centre discs (d4 white, e4 black, d5 black,
    /// e5 white on 8×8; e5 white, f5 black, e6 black, f6 white on 10×10), or
    /// an empty board in reversi. Black to move, nothing placed.
    pub fn start(kind: Kind) -> Board {
        let size = kind.size();
        let mut cells = vec![EMPTY; size * size];
        match kind {
            Kind::Std | Kind::Anti => {
                cells[27] = WHITE;
                cells[28] = BLACK;
                cells[35] = BLACK;
                cells[36] = WHITE;
            }
            Kind::Grand | Kind::Octagon => {
                cells[44] = WHITE;
                cells[45] = BLACK;
                cells[54] = BLACK;
                cells[55] = WHITE;
            }
            Kind::Reversi => {}
        }
        if kind == Kind::Octagon {
            for square in OCTAGON_BLOCKED {
                cells[square] = BLOCKED;
            }
        }
        Board {
            kind,
            size,
            cells,
            to_move: BLACK,
            placed: [0, 0],
        }
    }

    /// A position from a board as bots see it (`size²` cells of 0, 1, 2;
    /// octagon's blocked squares must be 0), the colour to move and the
    /// discs placed so far. `None` if the board does not fit the mode.
    pub fn from_cells(kind: Kind, board: &[u8], to_move: u8, placed: [u32; 2]) -> Option<Board> {
        let mut position = Board::start(kind);
        if board.len() != position.squares() || !(to_move == BLACK || to_move == WHITE) {
            return None;
        }
        for (square, &cell) in board.iter().enumerate() {
            if cell > WHITE || (position.cells[square] == BLOCKED && cell != EMPTY) {
                return None;
            }
            if position.cells[square] != BLOCKED {
                position.cells[square] = cell;
            }
        }
        position.to_move = to_move;
        position.placed = placed;
        Some(position)
    }

    /// The board as bots see it: 0 empty (blocked too), 1 black, 2 white.
    pub fn cells(&self) -> Vec<u8> {
        self.cells
            .iter()
            .map(|&cell| if cell == BLOCKED { EMPTY } else { cell })
            .collect()
    }

    /// Whether `square` is one of octagon's blocked corners.
    pub fn is_blocked(&self, square: usize) -> bool {
        self.cells[square] == BLOCKED
    }

    /// Whether `square` holds a disc.
    pub fn is_occupied(&self, square: usize) -> bool {
        self.cells[square] == BLACK || self.cells[square] == WHITE
    }

    /// Number of squares, playable or not.
    pub fn squares(&self) -> usize {
        self.size * self.size
    }

    /// Black's and white's discs on the board.
    pub fn counts(&self) -> [u32; 2] {
        let mut counts = [0, 0];
        for &cell in &self.cells {
            if cell == BLACK {
                counts[0] += 1;
            } else if cell == WHITE {
                counts[1] += 1;
            }
        }
        counts
    }

    /// Whether any reversi centre square is still empty.
    fn in_centre_phase(&self) -> bool {
        self.kind == Kind::Reversi && REVERSI_CENTRE.iter().any(|&square| self.cells[square] == EMPTY)
    }

    /// The opponent discs that `color` placing on `square` would flip,
    /// following standard rules (no reversi special cases).
    pub fn flips(&self, square: usize, color: u8) -> Vec<usize> {
        let size = self.size as i32;
        let other = opponent(color);
        let mut flipped = Vec::new();
        for (row_step, column_step) in DIRECTIONS {
            let mut row = (square / self.size) as i32;
            let mut column = (square % self.size) as i32;
            let mut line = Vec::new();
            loop {
                row += row_step;
                column += column_step;
                if row < 0 || row >= size || column < 0 || column >= size {
                    break; // the edge: nothing bracketed
                }
                let here = (row * size + column) as usize;
                let cell = self.cells[here];
                if cell == other {
                    line.push(here);
                } else {
                    if cell == color {
                        flipped.extend_from_slice(&line);
                    }
                    break; // own disc closes the line; empty or blocked ends it
                }
            }
        }
        flipped
    }

    /// Legal squares of `color`, ascending.
    pub fn legal_moves_for(&self, color: u8) -> Vec<usize> {
        let me = usize::from(color - 1);
        if self.kind == Kind::Reversi && self.placed[me] >= REVERSI_MAX_PLACED {
            return Vec::new();
        }
        if self.in_centre_phase() {
            return REVERSI_CENTRE
                .iter()
                .copied()
                .filter(|&square| self.cells[square] == EMPTY)
                .collect();
        }
        (0..self.squares())
            .filter(|&square| self.cells[square] == EMPTY && !self.flips(square, color).is_empty())
            .collect()
    }

    /// Legal squares of the colour to move, ascending.
    pub fn legal_moves(&self) -> Vec<usize> {
        self.legal_moves_for(self.to_move)
    }

    /// Neither colour can place a disc.
    pub fn is_over(&self) -> bool {
        self.legal_moves_for(BLACK).is_empty() && self.legal_moves_for(WHITE).is_empty()
    }

    /// The colour to move has no move, but the other one has.
    pub fn must_pass(&self) -> bool {
        self.legal_moves().is_empty() && !self.is_over()
    }

    /// Places a disc for the colour to move; `None` if the move is illegal.
    pub fn play(&self, square: usize) -> Option<Board> {
        if !self.legal_moves().contains(&square) {
            return None;
        }
        let color = self.to_move;
        let mut next = self.clone();
        if !self.in_centre_phase() {
            for flipped in self.flips(square, color) {
                next.cells[flipped] = color;
            }
        }
        next.cells[square] = color;
        next.placed[usize::from(color - 1)] += 1;
        next.to_move = opponent(color);
        Some(next)
    }

    /// Passes; `None` unless the colour to move must pass.
    pub fn pass(&self) -> Option<Board> {
        if !self.must_pass() {
            return None;
        }
        let mut next = self.clone();
        next.to_move = opponent(self.to_move);
        Some(next)
    }
}
