//! arbiter.zig — the Arbiter bot protocol for Zig 0.17.1.
//!
//! One JSON request line arrives on stdin per turn; the bot answers one JSON
//! line on stdout. `run` does the loop: it reads a line, parses it with
//! std.json into `othello.Request` or `tictactoe.Message` (unknown fields are
//! ignored), starts a `Deadline`, calls your bot and writes its reply.
//!
//! Your bot is any struct with these declarations (leave out a game you do
//! not play; that game then gets a pass / an error reply):
//!
//!     pub const name = "my-bot";
//!     pub fn playOthello(self: *Bot, req: *const arbiter.othello.Request, deadline: arbiter.Deadline) arbiter.othello.Move
//!     pub fn playTictactoe(self: *Bot, grid: arbiter.tictactoe.Grid, me: arbiter.tictactoe.Mark, deadline: arbiter.Deadline) u8
//!
//! The same source compiled natively speaks the same protocol over real pipes.
const std = @import("std");
const Io = std.Io;
const Allocator = std.mem.Allocator;

/// Longest request line accepted (Othello requests grow with `history`:
/// about 50 bytes a move, so a few KiB in practice).
pub const max_line = 256 * 1024;

/// Writes a line to stderr, the bot's log (the referee keeps 64 KiB per
/// game and shows the last lines of a bot that faults). Each flush of the
/// 1 KiB buffer is one host call.
pub fn log(comptime fmt: []const u8, args: anytype) void {
    var buffer: [1024]u8 = undefined;
    const stderr = std.debug.lockStderr(&buffer);
    defer std.debug.unlockStderr();
    stderr.file_writer.interface.print(fmt ++ "\n", args) catch {};
}

/// At most the first 200 bytes of `text`, for logging.
pub fn clip(text: []const u8) []const u8 {
    return text[0..@min(text.len, 200)];
}

// ---------------------------------------------------------------- time

/// The time a bot may use for the current move, started when the request
/// arrived. It reads the monotonic clock, which in the sandbox is the
/// virtual clock driven by fuel: the same decisions on every machine.
pub const Deadline = struct {
    io: Io,
    started: Io.Timestamp,
    /// The most this move may take (`budget_ms`).
    budget_ms: i64,
    /// The bot's clock left in this game (`remaining_ms`).
    remaining_ms: i64,

    pub fn start(io: Io, budget_ms: i64, remaining_ms: i64) Deadline {
        return .{
            .io = io,
            .started = Io.Clock.awake.now(io),
            .budget_ms = budget_ms,
            .remaining_ms = remaining_ms,
        };
    }

    /// Nanoseconds spent on this move so far.
    pub fn elapsedNs(d: Deadline) i64 {
        return @intCast(d.started.durationTo(Io.Clock.awake.now(d.io)).nanoseconds);
    }

    /// Milliseconds spent on this move so far.
    pub fn elapsedMs(d: Deadline) i64 {
        return @divTrunc(d.elapsedNs(), std.time.ns_per_ms);
    }

    /// A time target for this move in ms: the bank shared over `moves_left`
    /// moves, never more than half the move's budget nor more than `cap_ms`.
    pub fn target(d: Deadline, moves_left: u32, cap_ms: i64) i64 {
        const share = @divTrunc(d.remaining_ms, @max(moves_left, 1));
        return @max(0, @min(share, @min(@divTrunc(d.budget_ms, 2), cap_ms)));
    }

    /// Whether `target_ms` (from the start of the move) has been used up.
    /// Each call is one host call (`clock_time_get`), so in a search check it
    /// every few thousand nodes, not at every node.
    pub fn isPast(d: Deadline, target_ms: i64) bool {
        return d.elapsedNs() >= target_ms * std.time.ns_per_ms;
    }
};

// ---------------------------------------------------------------- randomness

/// A fast PRNG seeded from the host's random source (`random_get`, which in
/// the sandbox is a stream seeded by the match, so games replay exactly).
/// A native run under `arbiter play cmd:...` gets `ARBITER_RANDOM` (in hex,
/// the bytes `random_get` would have given in the sandbox) and seeds from
/// it, so the native build draws the same numbers as the WebAssembly one
/// (draw with fixed-width integers, e.g. `uintLessThan(u32, n)`: `usize`
/// is 32 bits in WebAssembly and 64 natively).
pub fn rngFromHost(init: std.process.Init) std.Random.DefaultPrng {
    var seed: [8]u8 = undefined;
    if (init.environ_map.get("ARBITER_RANDOM")) |hex| {
        if (hex.len >= 2 * seed.len) {
            if (std.fmt.hexToBytes(&seed, hex[0 .. 2 * seed.len])) |_| {
                return .init(std.mem.readInt(u64, &seed, .little));
            } else |_| {}
        }
    }
    init.io.randomSecure(&seed) catch init.io.random(&seed);
    return .init(std.mem.readInt(u64, &seed, .little));
}

// ---------------------------------------------------------------- othello

pub const othello = struct {
    pub const Mode = enum { std, anti, grand, octagon, reversi };

    /// Discs placed so far per colour (the JSON keys are "1" and "2").
    pub const Placed = struct { @"1": u32 = 0, @"2": u32 = 0 };

    pub const HistoryEntry = struct {
        color: u8 = 0,
        participant: u8 = 0,
        /// The square, or -1 for a pass.
        move: i32 = -1,
        at_ms: u64 = 0,
    };

    /// The FlipSight engine request, as in docs/spec/othello.md.
    pub const Request = struct {
        /// size² squares: 0 empty (blocked squares too), 1 black, 2 white.
        board: []const u8 = &.{},
        /// The colour to move: the bot's colour (1 black, 2 white).
        color: u8 = 1,
        /// Legal squares for `color`; empty means the bot must pass.
        legal_moves: []const u16 = &.{},
        game_mode: []const u8 = "std",
        board_size: u8 = 8,
        blocked_squares: []const u16 = &.{},
        placed: Placed = .{},
        remaining_ms: i64 = 1000,
        budget_ms: i64 = 100,
        match_id: ?i64 = null,
        leg: u8 = 0,
        revision: u32 = 0,
        history: []const HistoryEntry = &.{},

        /// The mode (`std` for a name this library does not know).
        pub fn mode(r: *const Request) Mode {
            return std.meta.stringToEnum(Mode, r.game_mode) orelse .std;
        }

        pub fn isBlocked(r: *const Request, square: usize) bool {
            for (r.blocked_squares) |b| if (b == square) return true;
            return false;
        }

        /// How many discs playing `square` flips for the colour to move.
        pub fn flips(r: *const Request, square: usize) u32 {
            return countFlips(r.board, r.board_size, r.color, square);
        }
    };

    pub const Move = union(enum) {
        pass,
        square: u16,
    };

    const directions = [8][2]i32{ .{ -1, -1 }, .{ -1, 0 }, .{ -1, 1 }, .{ 0, -1 }, .{ 0, 1 }, .{ 1, -1 }, .{ 1, 0 }, .{ 1, 1 } };

    /// Discs that `color` playing on the empty `square` flips on `board`
    /// (`size`×`size`). A line stops at the edge and at empty squares, so it
    /// also stops at blocked squares (which the board shows as 0). In
    /// reversi's centre-filling phase this is 0, as on the referee's side.
    pub fn countFlips(board: []const u8, size: u8, color: u8, square: usize) u32 {
        return walk(@constCast(board), size, color, square, false);
    }

    /// Plays `square` for `color` on `board` in place (the disc and its flips)
    /// and returns the number flipped. The square must be legal.
    pub fn place(board: []u8, size: u8, color: u8, square: usize) u32 {
        const n = walk(board, size, color, square, true);
        board[square] = color;
        return n;
    }

    fn walk(board: []u8, size: u8, color: u8, square: usize, apply: bool) u32 {
        const n: i32 = size;
        if (square >= board.len) return 0;
        const row: i32 = @intCast(square / size);
        const col: i32 = @intCast(square % size);
        const opponent: u8 = 3 - color;
        var total: u32 = 0;
        for (directions) |d| {
            var r = row + d[0];
            var c = col + d[1];
            var line_len: u32 = 0;
            while (r >= 0 and r < n and c >= 0 and c < n) : ({
                r += d[0];
                c += d[1];
            }) {
                const v = board[@intCast(r * n + c)];
                if (v == opponent) {
                    line_len += 1;
                    continue;
                }
                if (v == color and line_len > 0) {
                    total += line_len;
                    if (apply) {
                        var k: u32 = 1;
                        while (k <= line_len) : (k += 1) {
                            const rr = row + d[0] * @as(i32, @intCast(k));
                            const cc = col + d[1] * @as(i32, @intCast(k));
                            board[@intCast(rr * n + cc)] = color;
                        }
                    }
                }
                break;
            }
        }
        return total;
    }

    /// Writes the reply line: `{"move":19}`, or `{"move":"--"}` for a pass.
    pub fn writeReply(w: *Io.Writer, move: Move) Io.Writer.Error!void {
        switch (move) {
            .pass => try w.writeAll("{\"move\":\"--\"}\n"),
            .square => |s| try w.print("{{\"move\":{d}}}\n", .{s}),
        }
    }

    /// Parses a request line (allocations go to `arena`).
    pub fn parse(arena: Allocator, line: []const u8) !Request {
        return std.json.parseFromSliceLeaky(Request, arena, line, .{ .ignore_unknown_fields = true });
    }
};

// ---------------------------------------------------------------- tic-tac-toe

pub const tictactoe = struct {
    pub const Mark = enum(u8) { empty, x, o };
    /// Cells 0..8, cell = row * 3 + column ("R-C" on the wire).
    pub const Grid = [9]Mark;

    /// The `board` field: `""` at init (grid null), then an object
    /// {"0-0": "", "0-1": "X", ...} read into a grid.
    pub const Board = struct {
        grid: ?Grid = null,

        /// Called by std.json for this type.
        pub fn jsonParse(arena: Allocator, source: anytype, options: std.json.ParseOptions) !Board {
            switch (try source.peekNextTokenType()) {
                .object_begin => {},
                .null => {
                    _ = try source.next();
                    return .{};
                },
                else => {
                    _ = try std.json.innerParse([]const u8, arena, source, options);
                    return .{};
                },
            }
            _ = try source.next();
            var g: Grid = @splat(.empty);
            while (try source.peekNextTokenType() != .object_end) {
                const key = try std.json.innerParse([]const u8, arena, source, options);
                const value = try std.json.innerParse([]const u8, arena, source, options);
                const cell = parseCell(key) orelse return error.UnexpectedToken;
                g[cell] = if (std.ascii.eqlIgnoreCase(value, "X")) .x else if (std.ascii.eqlIgnoreCase(value, "O")) .o else .empty;
            }
            _ = try source.next();
            return .{ .grid = g };
        }
    };

    /// The botsarena message, as in docs/spec/tictactoe.md.
    pub const Message = struct {
        @"game-id": []const u8 = "",
        /// "init" or "play-turn".
        action: []const u8 = "",
        game: []const u8 = "tictactoe",
        players: u8 = 2,
        /// "" at init, then the grid.
        board: Board = .{},
        /// "X" or "O" at play-turn.
        you: []const u8 = "",
        /// 0 for the side that moves first.
        @"player-index": u8 = 0,

        /// The bot's mark (X moves first).
        pub fn me(m: *const Message) Mark {
            if (std.ascii.eqlIgnoreCase(m.you, "O")) return .o;
            if (std.ascii.eqlIgnoreCase(m.you, "X")) return .x;
            return if (m.@"player-index" == 0) .x else .o;
        }

        /// The grid of a play-turn message, or null if there is none.
        pub fn grid(m: *const Message) ?Grid {
            return m.board.grid;
        }
    };

    /// "R-C" → row * 3 + column.
    pub fn parseCell(name: []const u8) ?u8 {
        if (name.len != 3 or name[1] != '-') return null;
        if (name[0] < '0' or name[0] > '2' or name[2] < '0' or name[2] > '2') return null;
        return (name[0] - '0') * 3 + (name[2] - '0');
    }

    pub fn other(mark: Mark) Mark {
        return switch (mark) {
            .x => .o,
            .o => .x,
            .empty => .empty,
        };
    }

    const lines = [8][3]u8{ .{ 0, 1, 2 }, .{ 3, 4, 5 }, .{ 6, 7, 8 }, .{ 0, 3, 6 }, .{ 1, 4, 7 }, .{ 2, 5, 8 }, .{ 0, 4, 8 }, .{ 2, 4, 6 } };

    /// The mark with three in a row, or .empty.
    pub fn winner(g: *const Grid) Mark {
        for (lines) |l| {
            if (g[l[0]] != .empty and g[l[0]] == g[l[1]] and g[l[1]] == g[l[2]]) return g[l[0]];
        }
        return .empty;
    }

    pub fn writeInit(w: *Io.Writer, name: []const u8) Io.Writer.Error!void {
        try w.writeAll("{\"name\":");
        try std.json.Stringify.value(name, .{}, w);
        try w.writeAll("}\n");
    }

    /// Writes `{"name":"","play":"R-C","error":null}`.
    pub fn writePlay(w: *Io.Writer, cell: u8) Io.Writer.Error!void {
        try w.print("{{\"name\":\"\",\"play\":\"{d}-{d}\",\"error\":null}}\n", .{ cell / 3, cell % 3 });
    }

    pub fn writeError(w: *Io.Writer, why: []const u8) Io.Writer.Error!void {
        try w.writeAll("{\"name\":\"\",\"play\":null,\"error\":");
        try std.json.Stringify.value(why, .{}, w);
        try w.writeAll("}\n");
    }

    /// Parses a message line (allocations go to `arena`).
    pub fn parse(arena: Allocator, line: []const u8) !Message {
        return std.json.parseFromSliceLeaky(Message, arena, line, .{ .ignore_unknown_fields = true });
    }

    /// Tic-tac-toe messages carry no clock: the default time control.
    pub const budget_ms = 100;
    pub const remaining_ms = 1000;
};

// ---------------------------------------------------------------- the loop

var in_buffer: [max_line]u8 = undefined;
var out_buffer: [4096]u8 = undefined;

/// Reads request lines until stdin ends and answers each with `bot` (a
/// pointer to your bot struct). `gpa` backs a per-request arena for parsing.
pub fn run(io: Io, gpa: Allocator, bot: anytype) !void {
    var reader = Io.File.Reader.initStreaming(.stdin(), io, &in_buffer);
    var writer = Io.File.Writer.initStreaming(.stdout(), io, &out_buffer);
    var arena = std.heap.ArenaAllocator.init(gpa);
    defer arena.deinit();
    while (true) {
        _ = arena.reset(.retain_capacity);
        const line = reader.interface.takeDelimiter('\n') catch |err| {
            log("cannot read a request line: {t}", .{err});
            return err;
        } orelse return;
        try answer(io, arena.allocator(), bot, line, &writer.interface);
        // One write of the whole line, then wait for the next request.
        try writer.interface.flush();
    }
}

/// Answers one request line with `bot`. A line that cannot be read still
/// gets a reply (a pass, or a tic-tac-toe error), with the reason on stderr.
pub fn answer(io: Io, arena: Allocator, bot: anytype, raw_line: []const u8, w: *Io.Writer) !void {
    const Bot = @TypeOf(bot.*);
    const line = std.mem.trimEnd(u8, raw_line, "\r");
    if (std.mem.indexOf(u8, line, "\"action\"") != null) {
        const message = tictactoe.parse(arena, line) catch |err| {
            log("cannot read message ({t}): {s}", .{ err, clip(line) });
            return tictactoe.writeError(w, "unreadable message");
        };
        if (std.mem.eql(u8, message.action, "init")) {
            return tictactoe.writeInit(w, if (@hasDecl(Bot, "name")) Bot.name else "bot");
        }
        if (@hasDecl(Bot, "playTictactoe")) {
            const grid = message.grid() orelse {
                log("cannot read the board of: {s}", .{clip(line)});
                return tictactoe.writeError(w, "unreadable board");
            };
            const deadline = Deadline.start(io, tictactoe.budget_ms, tictactoe.remaining_ms);
            return tictactoe.writePlay(w, bot.playTictactoe(grid, message.me(), deadline));
        } else {
            return tictactoe.writeError(w, "this bot does not play tic-tac-toe");
        }
    }
    const deadline_early = Deadline.start(io, 0, 0);
    const request = othello.parse(arena, line) catch |err| {
        log("cannot read request ({t}): {s}", .{ err, clip(line) });
        return othello.writeReply(w, .pass);
    };
    if (@hasDecl(Bot, "playOthello")) {
        var deadline = deadline_early;
        deadline.budget_ms = request.budget_ms;
        deadline.remaining_ms = request.remaining_ms;
        return othello.writeReply(w, bot.playOthello(&request, deadline));
    } else {
        return othello.writeReply(w, .pass);
    }
}
