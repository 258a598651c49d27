/* arbiter.h — the protocol library of the Arbiter C kit (C11, no dependencies).
 *
 * A bot reads one JSON request line from stdin per turn and writes one JSON
 * reply line to stdout (see the protocol spec). This library does the I/O,
 * parses the requests of both games (Othello family and tic-tac-toe) into a
 * struct, writes the replies, and gives a deadline helper and a host-seeded
 * random generator. It never crashes on bad input: a line it cannot read
 * comes back as ARBITER_UNKNOWN.
 *
 *   arbiter_request req;
 *   while (arbiter_read(&req)) {
 *       if (req.game == ARBITER_OTHELLO) arbiter_reply_othello(pick(&req), NULL);
 *       ...
 *   }
 */
#ifndef ARBITER_H
#define ARBITER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARBITER_MAX_SQUARES 100 /* 10x10 is the largest Othello board */
#define ARBITER_PASS (-1)

typedef enum {
    ARBITER_UNKNOWN = 0, /* not a JSON object, or neither game's fields */
    ARBITER_OTHELLO,
    ARBITER_TICTACTOE
} arbiter_game;

typedef enum {
    ARBITER_MODE_STD = 0,
    ARBITER_MODE_ANTI,
    ARBITER_MODE_GRAND,
    ARBITER_MODE_OCTAGON,
    ARBITER_MODE_REVERSI,
    ARBITER_MODE_OTHER /* a mode name this library does not know */
} arbiter_mode;

/* Othello request (FlipSight engine format). Absent integers are -1. */
typedef struct {
    arbiter_mode mode;
    char mode_name[16];
    int board_size;                    /* 8 or 10 (inferred from board if absent) */
    int n_board;                       /* entries read into board */
    int board[ARBITER_MAX_SQUARES];    /* row*size+col: 0 empty, 1 black, 2 white */
    int color;                         /* colour to move = the bot's colour */
    int n_legal;                       /* 0: the bot must pass */
    int legal_moves[ARBITER_MAX_SQUARES];
    int n_blocked;
    int blocked_squares[ARBITER_MAX_SQUARES];
    unsigned char blocked[ARBITER_MAX_SQUARES]; /* 1 if the square is blocked */
    int placed[3];                     /* placed[1], placed[2]: discs placed per colour */
    int64_t remaining_ms;              /* clock left in this leg */
    int64_t budget_ms;                 /* the most this move may take */
    int64_t match_id;
    int leg;
    int revision;
    int n_history;                     /* moves in "history" (entries not kept) */
} arbiter_othello;

/* Tic-tac-toe request (botsarena format). */
typedef struct {
    int init;            /* 1 for "action":"init", 0 for "play-turn" */
    char game_id[64];
    char board[9];       /* index r*3+c: 'X', 'O' or 0 for empty */
    char you;            /* 'X' or 'O' (0 at init) */
    int player_index;    /* 0 moves first */
} arbiter_tictactoe;

typedef struct {
    arbiter_game game;
    arbiter_othello othello;     /* valid when game == ARBITER_OTHELLO */
    arbiter_tictactoe tictactoe; /* valid when game == ARBITER_TICTACTOE */
    int64_t received_ms;         /* arbiter_now_ms() when the line was read */
} arbiter_request;

/* ---- I/O ---------------------------------------------------------------- */

/* Reads the next request line from stdin (any length) and parses it.
 * Returns 0 at end of input, 1 otherwise (check req->game). */
int arbiter_read(arbiter_request *req);

/* Parses one line (need not be NUL-terminated; len bytes). Returns req->game. */
arbiter_game arbiter_parse(const char *line, size_t len, arbiter_request *req);

/* Writes `json` plus '\n' to stdout in one write and flushes. */
void arbiter_reply_raw(const char *json);

/* Othello: {"move":19} or, for ARBITER_PASS, {"move":"--"}.
 * `extra` (may be NULL) is appended as more members, e.g. "\"depth\":5":
 * the referee ignores them but keeps them in the replay. */
void arbiter_reply_othello(int square, const char *extra);

/* Tic-tac-toe: {"name":"","play":"R-C","error":null}. */
void arbiter_reply_tictactoe(int row, int col);

/* Tic-tac-toe init answer: {"name":"NAME"}. */
void arbiter_reply_name(const char *name);

/* ---- Time --------------------------------------------------------------- */

/* Milliseconds on the monotonic clock. In the sandbox this is the virtual
 * clock driven by fuel: it only moves while the bot computes. */
int64_t arbiter_now_ms(void);

/* When to stop thinking about this move, on the arbiter_now_ms() scale:
 * start + min(budget_ms / 2, remaining_ms / moves_left), at least 1 ms.
 * Negative budget/remaining mean unknown (20 ms is used). */
int64_t arbiter_deadline_ms(int64_t start_ms, int64_t budget_ms,
                            int64_t remaining_ms, int moves_left);

/* 1 once arbiter_now_ms() has reached `deadline_ms`. One host call: in a
 * search, ask every few thousand nodes, not at every node. */
int arbiter_time_up(int64_t deadline_ms);

/* ---- Random numbers ----------------------------------------------------- */

/* xoshiro256**, seeded on first use from getentropy() (the host's random_get:
 * reproducible per game in the sandbox). */
uint64_t arbiter_random(void);
/* Uniform in [0, n); 0 when n == 0. */
uint32_t arbiter_random_below(uint32_t n);
/* Fixed seed, for tests. */
void arbiter_random_seed(uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
