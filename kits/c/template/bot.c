/* bot.c — my-bot: the template bot of the Arbiter C kit.
 *
 * Othello (all five modes): greedy, the legal move that flips the most discs
 * (in "anti" the fewest), ties broken at random.
 * Tic-tac-toe: perfect play by minimax.
 *
 * Replace choose_othello() / choose_tictactoe() with your own ideas; the
 * protocol is handled by arbiter.c. Log to stderr, never to stdout.
 */
#include <stdio.h>

#include "arbiter.h"

/* ---- Othello ------------------------------------------------------------ */

static const int DR[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
static const int DC[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

/* Discs that `color` would flip by playing `square`. Lines stop at the edge,
 * at empty squares and at blocked squares (octagon). */
static int flips(const arbiter_othello *o, int square, int color) {
    int size = o->board_size, total = 0;
    int other = 3 - color;
    if (square < 0 || square >= size * size || o->blocked[square]) return 0;
    if (o->mode == ARBITER_MODE_REVERSI) {
        /* Classic reversi: while a centre square is empty, placements flip nothing. */
        static const int centre[4] = {27, 28, 35, 36};
        for (int i = 0; i < 4; i++)
            if (o->board[centre[i]] == 0) return 0;
    }
    for (int d = 0; d < 8; d++) {
        int r = square / size + DR[d], c = square % size + DC[d], run = 0;
        while (r >= 0 && r < size && c >= 0 && c < size && !o->blocked[r * size + c] &&
               o->board[r * size + c] == other) {
            r += DR[d];
            c += DC[d];
            run++;
        }
        if (run > 0 && r >= 0 && r < size && c >= 0 && c < size && !o->blocked[r * size + c] &&
            o->board[r * size + c] == color)
            total += run;
    }
    return total;
}

static int choose_othello(const arbiter_othello *o) {
    if (o->n_legal == 0) return ARBITER_PASS; /* legal_moves [] means: pass */
    int anti = o->mode == ARBITER_MODE_ANTI;
    int best = -1, best_score = 0, ties = 0;
    for (int i = 0; i < o->n_legal; i++) {
        int m = o->legal_moves[i];
        int score = flips(o, m, o->color);
        if (anti) score = -score;
        if (best < 0 || score > best_score) {
            best = m;
            best_score = score;
            ties = 1;
        } else if (score == best_score && arbiter_random_below((uint32_t)++ties) == 0) {
            best = m; /* reservoir sampling: each tied move equally likely */
        }
    }
    return best;
}

/* ---- Tic-tac-toe -------------------------------------------------------- */

static const int LINES[8][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6},
                                {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}};

static char winner(const char *b) {
    for (int i = 0; i < 8; i++)
        if (b[LINES[i][0]] && b[LINES[i][0]] == b[LINES[i][1]] && b[LINES[i][1]] == b[LINES[i][2]])
            return b[LINES[i][0]];
    return 0;
}

/* Score for `me` with `turn` to move: +10-depth win, -(10-depth) loss, 0 draw. */
static int minimax(char *b, char turn, char me, int depth) {
    char w = winner(b);
    if (w) return w == me ? 10 - depth : depth - 10;
    int best = turn == me ? -100 : 100, any = 0;
    for (int i = 0; i < 9; i++) {
        if (b[i]) continue;
        any = 1;
        b[i] = turn;
        int s = minimax(b, turn == 'X' ? 'O' : 'X', me, depth + 1);
        b[i] = 0;
        if (turn == me ? s > best : s < best) best = s;
    }
    return any ? best : 0;
}

static int choose_tictactoe(const arbiter_tictactoe *t) {
    char b[9];
    int xs = 0, os = 0, best = -1, best_score = -1000;
    for (int i = 0; i < 9; i++) {
        b[i] = t->board[i];
        xs += b[i] == 'X';
        os += b[i] == 'O';
    }
    char me = t->you ? t->you : (xs > os ? 'O' : 'X');
    char them = me == 'X' ? 'O' : 'X';
    for (int i = 0; i < 9; i++) {
        if (b[i]) continue;
        b[i] = me;
        int s = minimax(b, them, me, 1);
        b[i] = 0;
        if (s > best_score) {
            best_score = s;
            best = i;
        }
    }
    return best; /* -1 if the board is full */
}

/* ---- Main loop ---------------------------------------------------------- */

int main(void) {
    arbiter_request req;
    while (arbiter_read(&req)) {
        switch (req.game) {
        case ARBITER_OTHELLO:
            arbiter_reply_othello(choose_othello(&req.othello), NULL);
            break;
        case ARBITER_TICTACTOE:
            if (req.tictactoe.init) {
                arbiter_reply_name("my-bot");
            } else {
                int sq = choose_tictactoe(&req.tictactoe);
                if (sq < 0) sq = 0; /* full board: nothing sensible to say */
                arbiter_reply_tictactoe(sq / 3, sq % 3);
            }
            break;
        default:
            fprintf(stderr, "my-bot: could not read the request\n");
            arbiter_reply_raw("{}");
            break;
        }
    }
    return 0;
}
