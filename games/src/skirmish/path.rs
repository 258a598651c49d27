//! Shortest 4-neighbour paths on the grid (breadth-first), with the
//! neighbour order relative to the side that walks.

use super::map::Terrain;
use crate::Side;

/// A tile, `(x, y)`.
pub(super) type Tile = (i32, i32);

/// Chebyshev distance between the closest tiles of two squares given by
/// top-left tile and side length.
pub(super) fn distance(a: Tile, a_size: i32, b: Tile, b_size: i32) -> i32 {
    let gap = |a0: i32, a_len: i32, b0: i32, b_len: i32| (b0 - (a0 + a_len - 1)).max(a0 - (b0 + b_len - 1)).max(0);
    gap(a.0, a_size, b.0, b_size).max(gap(a.1, a_size, b.1, b_size))
}

/// Where a walker wants to be: any tile within `range` (Chebyshev) of the
/// `size`×`size` square at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Goal {
    /// Top-left tile of the square.
    pub at: Tile,
    /// Side of the square.
    pub size: i32,
    /// How close is close enough.
    pub range: i32,
}

impl Goal {
    /// Whether a walker on `tile` is there.
    pub fn reached(&self, tile: Tile) -> bool {
        distance(tile, 1, self.at, self.size) <= self.range
    }
}

/// What the search reads: the grid and what blocks.
pub(super) struct Grid<'a> {
    /// Width.
    pub w: i32,
    /// Height.
    pub h: i32,
    /// Current terrain, `y * w + x`.
    pub terrain: &'a [Terrain],
    /// Tiles covered by a building, a construction site or a mine.
    pub blocked: &'a [bool],
}

impl Grid<'_> {
    /// Whether a unit may stand on `(x, y)`.
    pub fn walkable(&self, x: i32, y: i32) -> bool {
        if x < 0 || y < 0 || x >= self.w || y >= self.h {
            return false;
        }
        let i = (y * self.w + x) as usize;
        self.terrain.get(i) == Some(&Terrain::Ground) && self.blocked.get(i) == Some(&false)
    }
}

/// The four steps in `side`'s order: up, left, right, down in its own frame
/// (side 2's frame is the half-turn of the map, so its steps are negated).
fn steps(side: Side) -> [Tile; 4] {
    match side {
        Side::First => [(0, -1), (-1, 0), (1, 0), (0, 1)],
        Side::Second => [(0, 1), (1, 0), (-1, 0), (0, -1)],
    }
}

/// Reusable buffers of the search, so a path costs no allocation but its own.
#[derive(Clone, Debug, Default)]
pub(super) struct Scratch {
    mark: Vec<u32>,
    parent: Vec<u32>,
    queue: Vec<u32>,
    stamp: u32,
}

/// A shortest path from `from` to the first tile that reaches `goal`, in the
/// breadth-first order of `side`'s steps. When no reachable tile reaches the
/// goal, the path leads to the reachable tile closest to the goal's square
/// (Chebyshev), the first one found on ties. The result is reversed: its
/// last element is the next step; it is empty when `from` is already the
/// best tile.
pub(super) fn find(scratch: &mut Scratch, grid: &Grid, from: Tile, goal: Goal, side: Side) -> Vec<Tile> {
    let cells = (grid.w * grid.h) as usize;
    if scratch.mark.len() != cells {
        scratch.mark = vec![0; cells];
        scratch.parent = vec![0; cells];
        scratch.stamp = 0;
    }
    scratch.stamp = scratch.stamp.wrapping_add(1);
    if scratch.stamp == 0 {
        scratch.mark.iter_mut().for_each(|m| *m = 0);
        scratch.stamp = 1;
    }
    let stamp = scratch.stamp;
    let index = |(x, y): Tile| (y * grid.w + x) as usize;
    let tile = |i: u32| ((i as i32) % grid.w, (i as i32) / grid.w);
    if from.0 < 0 || from.1 < 0 || from.0 >= grid.w || from.1 >= grid.h {
        return Vec::new();
    }
    scratch.queue.clear();
    let start = index(from);
    scratch.mark[start] = stamp;
    scratch.queue.push(start as u32);
    let mut best = (distance(from, 1, goal.at, goal.size), start as u32);
    let mut head = 0;
    let mut found = None;
    while let Some(&current) = scratch.queue.get(head) {
        head += 1;
        let (x, y) = tile(current);
        let d = distance((x, y), 1, goal.at, goal.size);
        if d <= goal.range {
            found = Some(current);
            break;
        }
        if d < best.0 {
            best = (d, current);
        }
        for (dx, dy) in steps(side) {
            let (nx, ny) = (x + dx, y + dy);
            if grid.walkable(nx, ny) {
                let n = index((nx, ny));
                if scratch.mark[n] != stamp {
                    scratch.mark[n] = stamp;
                    scratch.parent[n] = current;
                    scratch.queue.push(n as u32);
                }
            }
        }
    }
    let mut at = found.unwrap_or(best.1);
    let mut path = Vec::new();
    while at as usize != start {
        path.push(tile(at));
        at = scratch.parent[at as usize];
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_of(rows: &[&str]) -> (i32, i32, Vec<Terrain>, Vec<bool>) {
        let terrain: Vec<Terrain> = rows
            .iter()
            .flat_map(|r| r.chars())
            .map(|c| if c == '#' { Terrain::Rock } else { Terrain::Ground })
            .collect();
        let blocked = vec![false; terrain.len()];
        (rows[0].len() as i32, rows.len() as i32, terrain, blocked)
    }

    #[test]
    fn distance_is_chebyshev_between_closest_tiles() {
        assert_eq!(distance((0, 0), 1, (0, 0), 1), 0);
        assert_eq!(distance((0, 0), 1, (3, 1), 1), 3);
        assert_eq!(distance((0, 0), 1, (1, 1), 3), 1);
        assert_eq!(distance((5, 5), 1, (1, 1), 3), 2);
        assert_eq!(distance((2, 2), 1, (1, 1), 3), 0);
    }

    #[test]
    fn path_goes_around_walls_and_mirrors() {
        let rows = ["......", ".####.", "......", "......"];
        let (w, h, terrain, blocked) = grid_of(&rows);
        let grid = Grid {
            w,
            h,
            terrain: &terrain,
            blocked: &blocked,
        };
        let mut scratch = Scratch::default();
        let goal = Goal {
            at: (2, 2),
            size: 1,
            range: 0,
        };
        let path = find(&mut scratch, &grid, (2, 0), goal, Side::First);
        assert_eq!(path.len(), 6, "{path:?}");
        assert_eq!(path.first(), Some(&(2, 2)));
        // The mirror image: rows rotated, start and goal rotated, side 2.
        let rotated: Vec<String> = rows.iter().rev().map(|r| r.chars().rev().collect()).collect();
        let rotated: Vec<&str> = rotated.iter().map(String::as_str).collect();
        let (w2, h2, terrain2, blocked2) = grid_of(&rotated);
        let grid2 = Grid {
            w: w2,
            h: h2,
            terrain: &terrain2,
            blocked: &blocked2,
        };
        let goal2 = Goal {
            at: (w - 1 - 2, h - 1 - 2),
            size: 1,
            range: 0,
        };
        let path2 = find(&mut scratch, &grid2, (w - 1 - 2, h - 1), goal2, Side::Second);
        let mirrored: Vec<Tile> = path.iter().map(|&(x, y)| (w - 1 - x, h - 1 - y)).collect();
        assert_eq!(path2, mirrored);
    }

    #[test]
    fn unreachable_goal_leads_to_the_closest_reachable_tile() {
        let rows = ["...#..", "...#..", "...#..", "...#.."];
        let (w, h, terrain, blocked) = grid_of(&rows);
        let grid = Grid {
            w,
            h,
            terrain: &terrain,
            blocked: &blocked,
        };
        let goal = Goal {
            at: (5, 1),
            size: 1,
            range: 0,
        };
        let path = find(&mut Scratch::default(), &grid, (0, 1), goal, Side::First);
        assert_eq!(path.first(), Some(&(2, 1)));
        assert!(!goal.reached((2, 1)));
        let here = find(&mut Scratch::default(), &grid, (2, 1), goal, Side::First);
        assert!(here.is_empty());
    }
}
