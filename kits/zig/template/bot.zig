//! my-bot: greedy Othello (all five modes) and perfect tic-tac-toe.
//! Build with `sh build.sh`; see README.md.
const std = @import("std");
const arbiter = @import("arbiter.zig");
const othello = arbiter.othello;
const ttt = arbiter.tictactoe;

const Bot = struct {
    pub const name = "my-bot";

    rng: std.Random.DefaultPrng,

    /// Greedy: the legal move that flips the most discs (the fewest in
    /// `anti`), random among equals. Passes when `legal_moves` is empty.
    pub fn playOthello(self: *Bot, req: *const othello.Request, deadline: arbiter.Deadline) othello.Move {
        _ = deadline; // a search would stop at deadline.isPast(deadline.target(30, 200))
        const fewest = req.mode() == .anti;
        var best: [128]u16 = undefined; // ties (≤ 100 squares on a board)
        var count: usize = 0;
        var best_score: i64 = std.math.minInt(i64);
        for (req.legal_moves) |square| {
            if (square >= req.board.len or req.isBlocked(square)) continue;
            const flips: i64 = req.flips(square);
            const score = if (fewest) -flips else flips;
            if (score > best_score) {
                best_score = score;
                count = 0;
            }
            if (score == best_score and count < best.len) {
                best[count] = square;
                count += 1;
            }
        }
        if (count == 0) {
            // No legal move (or only unplayable ones): pass, or trust the referee's list.
            return if (req.legal_moves.len == 0) .pass else .{ .square = req.legal_moves[0] };
        }
        return .{ .square = best[self.rng.random().uintLessThan(u32, @intCast(count))] };
    }

    /// Perfect play by minimax (negamax with alpha-beta), random among the
    /// best cells; a quicker win scores higher.
    pub fn playTictactoe(self: *Bot, grid: ttt.Grid, me: ttt.Mark, deadline: arbiter.Deadline) u8 {
        _ = deadline;
        var g = grid;
        var best: [9]u8 = undefined;
        var count: usize = 0;
        var best_value: i32 = -100;
        for (0..9) |i| {
            if (g[i] != .empty) continue;
            g[i] = me;
            const value = -negamax(&g, ttt.other(me), 1, -100, 100);
            g[i] = .empty;
            if (value > best_value) {
                best_value = value;
                count = 0;
            }
            if (value == best_value) {
                best[count] = @intCast(i);
                count += 1;
            }
        }
        if (count == 0) return 0; // full grid: nothing to play
        return best[self.rng.random().uintLessThan(u32, @intCast(count))];
    }
};

/// The value of `g` for `to_move`: 10 - depth for a win, 0 a draw.
fn negamax(g: *ttt.Grid, to_move: ttt.Mark, depth: i32, alpha_in: i32, beta: i32) i32 {
    if (ttt.winner(g) != .empty) return depth - 10; // the previous mover won
    var alpha = alpha_in;
    var any = false;
    for (0..9) |i| {
        if (g[i] != .empty) continue;
        any = true;
        g[i] = to_move;
        const value = -negamax(g, ttt.other(to_move), depth + 1, -beta, -alpha);
        g[i] = .empty;
        if (value > alpha) alpha = value;
        if (alpha >= beta) break;
    }
    return if (any) alpha else 0;
}

pub fn main(init: std.process.Init) !void {
    var bot: Bot = .{ .rng = arbiter.rngFromHost(init) };
    try arbiter.run(init.io, init.gpa, &bot);
}
