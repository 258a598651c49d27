//! Maps: the text format, its validation, the built-in maps, and the
//! half-turn rotation that makes tie-breaks relative to a side.
//!
//! A map is its rows, top row first, one line each, all of the same length:
//! `.` ground, `T` tree, `#` rock or water, `M` a tile of a 2×2 gold mine,
//! `1` / `2` a tile of side 1's / side 2's 3×3 start town hall (the ground
//! under mines and halls is `.`). A valid map is symmetric under the half-turn
//! rotation `(x, y) → (W−1−x, H−1−y)`, with `1` and `2` swapped.

use super::units::{Kind, MINE_SIZE};
use crate::Side;

/// The built-in maps, by name.
pub const BUILTIN: [(&str, &str); 2] = [
    ("duel32", include_str!("maps/duel32.txt")),
    ("duel48", include_str!("maps/duel48.txt")),
];

/// Smallest and largest accepted width or height.
pub const MIN_SIDE: usize = 8;
/// Largest accepted width or height (the observation's `rows` stay small).
pub const MAX_SIDE: usize = 128;

/// What a tile is made of. Mines and buildings stand on ground.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Terrain {
    /// `.`: walkable and buildable.
    Ground,
    /// `T`: blocks; holds lumber until felled, then becomes ground.
    Tree,
    /// `#`: rock or water, blocks for good.
    Rock,
}

impl Terrain {
    /// The map glyph: `.`, `T` or `#`.
    pub fn glyph(self) -> char {
        match self {
            Terrain::Ground => '.',
            Terrain::Tree => 'T',
            Terrain::Rock => '#',
        }
    }
}

/// Why a map text is not a valid map. Coordinates are `x` (column), `y` (row).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    /// No built-in map has this name.
    #[error("no built-in map is called {0:?} (known: duel32, duel48)")]
    UnknownMap(String),
    /// Width or height outside `MIN_SIDE..=MAX_SIDE`.
    #[error("a map must be {MIN_SIDE} to {MAX_SIDE} tiles wide and high, not {w}x{h}")]
    BadSize {
        /// Width found (length of the first row).
        w: usize,
        /// Height found (number of rows).
        h: usize,
    },
    /// A row of another length than the first.
    #[error("row {y} has {len} tiles, the first row has {expected}")]
    NotRectangular {
        /// The row.
        y: usize,
        /// Its length.
        len: usize,
        /// The first row's length.
        expected: usize,
    },
    /// A character that is not one of `. T # M 1 2`.
    #[error("unknown glyph {glyph:?} at ({x}, {y}); use . T # M 1 2")]
    UnknownGlyph {
        /// Column.
        x: usize,
        /// Row.
        y: usize,
        /// The character.
        glyph: char,
    },
    /// A tile whose half-turn image holds another glyph.
    #[error("not symmetric: ({x}, {y}) does not match its half-turn image")]
    NotSymmetric {
        /// Column.
        x: usize,
        /// Row.
        y: usize,
    },
    /// `M` tiles that do not form 2×2 blocks.
    #[error("the mine tile at ({x}, {y}) is not part of a 2x2 block of M")]
    BadMine {
        /// Column.
        x: usize,
        /// Row.
        y: usize,
    },
    /// A side's `1` or `2` tiles are not exactly one 3×3 block.
    #[error("the tiles of start {side} are not exactly one 3x3 block")]
    BadStart {
        /// 1 or 2.
        side: u8,
    },
}

/// A validated map: terrain, mines and start town halls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Map {
    name: String,
    w: i32,
    h: i32,
    terrain: Vec<Terrain>,
    mines: Vec<(i32, i32)>,
    starts: [(i32, i32); 2],
}

impl Map {
    /// A built-in map by name (`duel32`, `duel48`).
    pub fn builtin(name: &str) -> Result<Map, MapError> {
        let (name, text) = BUILTIN
            .iter()
            .find(|(known, _)| *known == name)
            .ok_or_else(|| MapError::UnknownMap(name.chars().take(40).collect()))?;
        Map::parse(name, text)
    }

    /// Parses and validates a map text (see the module docs). Empty lines at
    /// the end and `\r` are ignored.
    pub fn parse(name: &str, text: &str) -> Result<Map, MapError> {
        let rows: Vec<&[u8]> = text
            .lines()
            .map(|line| line.trim_end_matches('\r').as_bytes())
            .collect::<Vec<_>>();
        let last = rows.iter().rposition(|row| !row.is_empty()).map_or(0, |i| i + 1);
        let rows = &rows[..last];
        let w = rows.first().map_or(0, |row| row.len());
        let h = rows.len();
        if !(MIN_SIDE..=MAX_SIDE).contains(&w) || !(MIN_SIDE..=MAX_SIDE).contains(&h) {
            return Err(MapError::BadSize { w, h });
        }
        for (y, row) in rows.iter().enumerate() {
            if row.len() != w {
                return Err(MapError::NotRectangular {
                    y,
                    len: row.len(),
                    expected: w,
                });
            }
            if let Some(x) = row.iter().position(|b| !b".T#M12".contains(b)) {
                let glyph = String::from_utf8_lossy(&row[x..]).chars().next().unwrap_or('?');
                return Err(MapError::UnknownGlyph { x, y, glyph });
            }
        }
        let glyph = |x: usize, y: usize| rows[y][x];
        for y in 0..h {
            for x in 0..w {
                let image = match glyph(w - 1 - x, h - 1 - y) {
                    b'1' => b'2',
                    b'2' => b'1',
                    other => other,
                };
                if glyph(x, y) != image {
                    return Err(MapError::NotSymmetric { x, y });
                }
            }
        }
        let mut claimed = vec![false; w * h];
        let mut mines = Vec::new();
        let size = MINE_SIZE as usize;
        for y in 0..h {
            for x in 0..w {
                if glyph(x, y) != b'M' || claimed[y * w + x] {
                    continue;
                }
                for dy in 0..size {
                    for dx in 0..size {
                        let (tx, ty) = (x + dx, y + dy);
                        if tx >= w || ty >= h || glyph(tx, ty) != b'M' || claimed[ty * w + tx] {
                            return Err(MapError::BadMine { x, y });
                        }
                        claimed[ty * w + tx] = true;
                    }
                }
                mines.push((x as i32, y as i32));
            }
        }
        let hall = Kind::TownHall.stats().size as usize;
        let mut starts = [(0, 0); 2];
        for (i, mark) in [b'1', b'2'].into_iter().enumerate() {
            let tiles: Vec<(usize, usize)> = (0..h)
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&(x, y)| glyph(x, y) == mark)
                .collect();
            let side = i as u8 + 1;
            let (x0, y0) = *tiles.first().ok_or(MapError::BadStart { side })?;
            let block = tiles.len() == hall * hall
                && tiles
                    .iter()
                    .all(|&(x, y)| x >= x0 && x < x0 + hall && y >= y0 && y < y0 + hall);
            if !block {
                return Err(MapError::BadStart { side });
            }
            starts[i] = (x0 as i32, y0 as i32);
        }
        let terrain = rows
            .iter()
            .flat_map(|row| row.iter())
            .map(|b| match b {
                b'T' => Terrain::Tree,
                b'#' => Terrain::Rock,
                _ => Terrain::Ground,
            })
            .collect();
        Ok(Map {
            name: name.to_string(),
            w: w as i32,
            h: h as i32,
            terrain,
            mines,
            starts,
        })
    }

    /// The map's name (`duel32` for a built-in map).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Width in tiles.
    pub fn width(&self) -> i32 {
        self.w
    }

    /// Height in tiles.
    pub fn height(&self) -> i32 {
        self.h
    }

    /// Whether `(x, y)` is on the map.
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && x < i64::from(self.w) && y < i64::from(self.h)
    }

    /// The terrain at the start of a game (trees not yet felled). Off the map
    /// is rock.
    pub fn terrain(&self, x: i32, y: i32) -> Terrain {
        if self.contains(x.into(), y.into()) {
            self.terrain[(y * self.w + x) as usize]
        } else {
            Terrain::Rock
        }
    }

    /// Top-left tiles of the gold mines, top row first, then left to right.
    pub fn mines(&self) -> &[(i32, i32)] {
        &self.mines
    }

    /// Top-left tile of `side`'s start town hall.
    pub fn start(&self, side: Side) -> (i32, i32) {
        self.starts[side.index()]
    }

    /// The terrain rows as bots get them: `.`, `T`, `#` only (mines and
    /// town halls stand on `.`); `rows[y]` has one character per `x`.
    pub fn rows(&self) -> Vec<String> {
        self.terrain
            .chunks(self.w as usize)
            .map(|row| row.iter().map(|t| t.glyph()).collect())
            .collect()
    }

    /// The map in its own text format (parses back to the same map).
    pub fn text(&self) -> String {
        let mut grid: Vec<Vec<char>> = self.rows().iter().map(|row| row.chars().collect()).collect();
        let mut paint = |(x, y): (i32, i32), size: i32, glyph: char| {
            for ty in y..y + size {
                for tx in x..x + size {
                    if let Some(cell) = grid.get_mut(ty as usize).and_then(|row| row.get_mut(tx as usize)) {
                        *cell = glyph;
                    }
                }
            }
        };
        for &mine in &self.mines {
            paint(mine, MINE_SIZE as i32, 'M');
        }
        let hall = Kind::TownHall.stats().size as i32;
        paint(self.starts[0], hall, '1');
        paint(self.starts[1], hall, '2');
        grid.into_iter()
            .map(|row| row.into_iter().collect::<String>() + "\n")
            .collect()
    }

    /// The half-turn image of the `size`×`size` square whose top-left tile is
    /// `(x, y)`: the top-left tile of the rotated square.
    pub fn rotate(&self, x: i32, y: i32, size: i32) -> (i32, i32) {
        (self.w - x - size, self.h - y - size)
    }

    /// Where the `size`×`size` square at `(x, y)` lies in `side`'s own frame
    /// (side 2's frame is the half-turn of the map), as the key `(y, x)` of
    /// its top-left tile there. Every tie between places is broken by the
    /// smallest key of the side concerned, so a game and its mirror image
    /// play out as mirror images.
    pub fn frame_key(&self, side: Side, x: i32, y: i32, size: i32) -> (i32, i32) {
        match side {
            Side::First => (y, x),
            Side::Second => {
                let (rx, ry) = self.rotate(x, y, size);
                (ry, rx)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_maps_parse_and_round_trip() {
        for (name, text) in BUILTIN {
            let map = Map::builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(map.text(), text, "{name}");
            assert_eq!(
                map.rotate(map.start(Side::First).0, map.start(Side::First).1, 3),
                map.start(Side::Second)
            );
            assert!(map.mines().len() >= 2);
        }
        assert_eq!(Map::builtin("duel32").map(|m| (m.width(), m.height())), Ok((32, 32)));
        assert_eq!(Map::builtin("duel48").map(|m| (m.width(), m.height())), Ok((48, 48)));
        assert!(matches!(Map::builtin("nope"), Err(MapError::UnknownMap(_))));
    }

    fn small(rows: &[&str]) -> Result<Map, MapError> {
        Map::parse("t", &rows.join("\n"))
    }

    const GOOD: [&str; 8] = [
        "111.....", "111..MM.", "111..MM.", "...T....", "....T...", ".MM..222", ".MM..222", ".....222",
    ];

    #[test]
    fn parser_accepts_a_small_symmetric_map() {
        let map = small(&GOOD).expect("valid");
        assert_eq!(map.mines(), &[(5, 1), (1, 5)]);
        assert_eq!(map.start(Side::Second), (5, 5));
        assert_eq!(map.terrain(3, 3), Terrain::Tree);
        assert_eq!(map.terrain(-1, 0), Terrain::Rock);
        assert_eq!(map.rows()[0], "........");
    }

    #[test]
    fn parser_names_each_defect() {
        let mut rows = GOOD;
        rows[3] = "...T...";
        assert!(matches!(small(&rows), Err(MapError::NotRectangular { y: 3, .. })));
        rows = GOOD;
        rows[3] = "...T..x.";
        assert!(matches!(
            small(&rows),
            Err(MapError::UnknownGlyph { x: 6, y: 3, glyph: 'x' })
        ));
        rows = GOOD;
        rows[3] = "...T...#";
        assert!(matches!(small(&rows), Err(MapError::NotSymmetric { .. })));
        rows = GOOD;
        rows[1] = "111..M..";
        rows[6] = "..M..222";
        assert!(matches!(small(&rows), Err(MapError::BadMine { .. })));
        rows = GOOD;
        rows[0] = "11......";
        rows[7] = "......22";
        assert!(matches!(small(&rows), Err(MapError::BadStart { side: 1 })));
        assert!(matches!(small(&["...."]), Err(MapError::BadSize { .. })));
    }

    #[test]
    fn frame_keys_of_a_square_and_its_image_agree() {
        let map = small(&GOOD).expect("valid");
        for (x, y, size) in [(0, 0, 1), (2, 3, 2), (5, 5, 3)] {
            let (rx, ry) = map.rotate(x, y, size);
            assert_eq!(
                map.frame_key(Side::First, x, y, size),
                map.frame_key(Side::Second, rx, ry, size)
            );
        }
    }
}
