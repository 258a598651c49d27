/* arbiter.c — see arbiter.h. */
#define _DEFAULT_SOURCE 1 /* getline, getentropy */
#define _POSIX_C_SOURCE 200809L
#include "arbiter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <sys/random.h>
#endif

/* ---- A small JSON reader ------------------------------------------------
 * A cursor over the line. Every function checks bounds; on malformed input
 * it sets `bad` and the caller stops. No recursion, so deep nesting is safe. */

typedef struct {
    const char *p, *end;
    int bad;
} jcur;

static void j_ws(jcur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int j_peek(jcur *c) {
    j_ws(c);
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

static int j_eat(jcur *c, char ch) {
    if (j_peek(c) == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int j_hex(jcur *c, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        if (c->p >= c->end) return 0;
        char h = *c->p++;
        v <<= 4;
        if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static void put_byte(char *out, size_t cap, size_t *n, unsigned b) {
    if (out && *n + 1 < cap) out[*n] = (char)b;
    (*n)++;
}

/* Reads a string (cursor on the opening quote) into out[cap], decoding
 * escapes to UTF-8; longer strings are truncated. NUL-terminates. */
static int j_string(jcur *c, char *out, size_t cap) {
    size_t n = 0;
    if (!j_eat(c, '"')) { c->bad = 1; return 0; }
    while (c->p < c->end) {
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == '"') {
            if (out && cap) out[n < cap ? n : cap - 1] = 0;
            return 1;
        }
        if (ch != '\\') { put_byte(out, cap, &n, ch); continue; }
        if (c->p >= c->end) break;
        char e = *c->p++;
        unsigned u;
        switch (e) {
        case 'b': put_byte(out, cap, &n, '\b'); break;
        case 'f': put_byte(out, cap, &n, '\f'); break;
        case 'n': put_byte(out, cap, &n, '\n'); break;
        case 'r': put_byte(out, cap, &n, '\r'); break;
        case 't': put_byte(out, cap, &n, '\t'); break;
        case 'u':
            if (!j_hex(c, &u)) { c->bad = 1; return 0; }
            if (u >= 0xD800 && u < 0xDC00 && c->end - c->p >= 6 && c->p[0] == '\\' && c->p[1] == 'u') {
                jcur save = *c;
                unsigned lo;
                c->p += 2;
                if (j_hex(c, &lo) && lo >= 0xDC00 && lo < 0xE000) u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                else *c = save;
            }
            if (u < 0x80) put_byte(out, cap, &n, u);
            else if (u < 0x800) { put_byte(out, cap, &n, 0xC0 | (u >> 6)); put_byte(out, cap, &n, 0x80 | (u & 63)); }
            else if (u < 0x10000) {
                put_byte(out, cap, &n, 0xE0 | (u >> 12));
                put_byte(out, cap, &n, 0x80 | ((u >> 6) & 63));
                put_byte(out, cap, &n, 0x80 | (u & 63));
            } else {
                put_byte(out, cap, &n, 0xF0 | (u >> 18));
                put_byte(out, cap, &n, 0x80 | ((u >> 12) & 63));
                put_byte(out, cap, &n, 0x80 | ((u >> 6) & 63));
                put_byte(out, cap, &n, 0x80 | (u & 63));
            }
            break;
        default: put_byte(out, cap, &n, (unsigned char)e); break; /* \" \\ \/ */
        }
    }
    c->bad = 1; /* unterminated */
    return 0;
}

/* Reads a number; fractions and exponents are accepted and truncated. */
static int j_int(jcur *c, int64_t *out) {
    j_ws(c);
    int neg = 0;
    int64_t v = 0;
    int digits = 0;
    if (c->p < c->end && *c->p == '-') { neg = 1; c->p++; }
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (v < (INT64_MAX - 9) / 10) v = v * 10 + (*c->p - '0');
        c->p++;
        digits++;
    }
    if (!digits) { c->bad = 1; return 0; }
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') c->p++;
    }
    *out = neg ? -v : v;
    return 1;
}

/* Skips any value (string, number, literal, array, object). */
static void j_skip(jcur *c) {
    int depth = 0;
    j_ws(c);
    do {
        if (c->p >= c->end) { c->bad = 1; return; }
        char ch = *c->p;
        if (ch == '"') {
            if (!j_string(c, NULL, 0)) return;
        } else if (ch == '[' || ch == '{') {
            depth++;
            c->p++;
        } else if (ch == ']' || ch == '}') {
            if (depth == 0) { c->bad = 1; return; }
            depth--;
            c->p++;
        } else if (depth == 0) {
            /* scalar: number, true, false, null */
            const char *start = c->p;
            while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']' &&
                   *c->p != ' ' && *c->p != '\t' && *c->p != '\r' && *c->p != '\n')
                c->p++;
            if (c->p == start) c->bad = 1;
            return;
        } else {
            c->p++;
        }
    } while (depth > 0);
}

/* Integer field: a number, or null (left as is). Other types are an error. */
static int64_t j_int_or(jcur *c, int64_t dflt) {
    int ch = j_peek(c);
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        int64_t v;
        if (j_int(c, &v)) return v;
        return dflt;
    }
    j_skip(c); /* null, or something unexpected */
    return dflt;
}

static int clamp_int(int64_t v) {
    return v > 1000000000 ? 1000000000 : v < -1000000000 ? -1000000000 : (int)v;
}

/* Array of integers into out[cap]; returns how many were read (extra dropped). */
static int j_int_array(jcur *c, int *out, int cap) {
    int n = 0;
    if (j_peek(c) != '[') { j_skip(c); return 0; }
    c->p++;
    if (j_eat(c, ']')) return 0;
    while (!c->bad) {
        int64_t v = j_int_or(c, -1);
        if (n < cap) out[n++] = clamp_int(v);
        if (j_eat(c, ',')) continue;
        if (!j_eat(c, ']')) c->bad = 1;
        break;
    }
    return n;
}

/* Object iteration: call j_obj_begin, then j_obj_key until it returns 0. */
static int j_obj_begin(jcur *c) {
    if (j_eat(c, '{')) return 1;
    c->bad = 1;
    return 0;
}

static int j_obj_key(jcur *c, int *first, char *key, size_t cap) {
    if (c->bad) return 0;
    if (j_eat(c, '}')) return 0;
    if (!*first && !j_eat(c, ',')) { c->bad = 1; return 0; }
    *first = 0;
    if (j_peek(c) != '"' || !j_string(c, key, cap)) { c->bad = 1; return 0; }
    if (!j_eat(c, ':')) { c->bad = 1; return 0; }
    return 1;
}

/* Counts the elements of an array and skips it. */
static int j_count_array(jcur *c) {
    int n = 0;
    if (j_peek(c) != '[') { j_skip(c); return 0; }
    c->p++;
    if (j_eat(c, ']')) return 0;
    while (!c->bad) {
        j_skip(c);
        n++;
        if (j_eat(c, ',')) continue;
        if (!j_eat(c, ']')) c->bad = 1;
        break;
    }
    return n;
}

/* ---- Requests ----------------------------------------------------------- */

static arbiter_mode mode_of(const char *s) {
    static const char *names[] = {"std", "anti", "grand", "octagon", "reversi"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) return (arbiter_mode)i;
    return ARBITER_MODE_OTHER;
}

/* tic-tac-toe "board": {"R-C": "X"|"O"|""} (or "" at init) */
static void ttt_board(jcur *c, arbiter_tictactoe *t) {
    char key[8], val[8];
    int first = 1;
    if (j_peek(c) != '{') { j_skip(c); return; }
    j_obj_begin(c);
    while (j_obj_key(c, &first, key, sizeof key)) {
        if (j_peek(c) != '"') { j_skip(c); continue; }
        j_string(c, val, sizeof val);
        if (strlen(key) == 3 && key[0] >= '0' && key[0] <= '2' && key[1] == '-' && key[2] >= '0' && key[2] <= '2') {
            char m = (val[0] == 'x' || val[0] == 'X') ? 'X' : (val[0] == 'o' || val[0] == 'O') ? 'O' : 0;
            t->board[(key[0] - '0') * 3 + (key[2] - '0')] = m;
        }
    }
}

arbiter_game arbiter_parse(const char *line, size_t len, arbiter_request *req) {
    arbiter_othello *o = &req->othello;
    arbiter_tictactoe *t = &req->tictactoe;
    jcur c = {line, line + len, 0};
    char key[32], str[64];
    int first = 1, saw_action = 0, saw_othello = 0;

    memset(o, 0, sizeof *o);
    memset(t, 0, sizeof *t);
    o->board_size = -1;
    o->color = -1;
    o->remaining_ms = o->budget_ms = o->match_id = -1;
    o->leg = o->revision = -1;
    t->player_index = -1;
    req->game = ARBITER_UNKNOWN;

    if (!j_obj_begin(&c)) return ARBITER_UNKNOWN;
    while (j_obj_key(&c, &first, key, sizeof key)) {
        /* both games */
        if (strcmp(key, "board") == 0) {
            int ch = j_peek(&c);
            if (ch == '[') { o->n_board = j_int_array(&c, o->board, ARBITER_MAX_SQUARES); saw_othello = 1; }
            else if (ch == '{') ttt_board(&c, t);
            else j_skip(&c);
        }
        /* Othello */
        else if (strcmp(key, "color") == 0) o->color = clamp_int(j_int_or(&c, -1));
        else if (strcmp(key, "legal_moves") == 0) { o->n_legal = j_int_array(&c, o->legal_moves, ARBITER_MAX_SQUARES); saw_othello = 1; }
        else if (strcmp(key, "game_mode") == 0) {
            if (j_peek(&c) == '"') {
                j_string(&c, o->mode_name, sizeof o->mode_name);
                o->mode = mode_of(o->mode_name);
            } else j_skip(&c);
        }
        else if (strcmp(key, "board_size") == 0) o->board_size = clamp_int(j_int_or(&c, -1));
        else if (strcmp(key, "blocked_squares") == 0) o->n_blocked = j_int_array(&c, o->blocked_squares, ARBITER_MAX_SQUARES);
        else if (strcmp(key, "placed") == 0) {
            int f2 = 1;
            char k2[8];
            if (j_peek(&c) != '{') { j_skip(&c); continue; }
            j_obj_begin(&c);
            while (j_obj_key(&c, &f2, k2, sizeof k2)) {
                int64_t v = j_int_or(&c, 0);
                if (strcmp(k2, "1") == 0) o->placed[1] = clamp_int(v);
                else if (strcmp(k2, "2") == 0) o->placed[2] = clamp_int(v);
            }
        }
        else if (strcmp(key, "remaining_ms") == 0) o->remaining_ms = j_int_or(&c, -1);
        else if (strcmp(key, "budget_ms") == 0) o->budget_ms = j_int_or(&c, -1);
        else if (strcmp(key, "match_id") == 0) o->match_id = j_int_or(&c, -1);
        else if (strcmp(key, "leg") == 0) o->leg = clamp_int(j_int_or(&c, -1));
        else if (strcmp(key, "revision") == 0) o->revision = clamp_int(j_int_or(&c, -1));
        else if (strcmp(key, "history") == 0) o->n_history = j_count_array(&c);
        /* tic-tac-toe */
        else if (strcmp(key, "action") == 0) {
            if (j_peek(&c) == '"') {
                j_string(&c, str, sizeof str);
                saw_action = 1;
                t->init = strcmp(str, "init") == 0;
            } else j_skip(&c);
        }
        else if (strcmp(key, "game-id") == 0) {
            if (j_peek(&c) == '"') j_string(&c, t->game_id, sizeof t->game_id);
            else j_skip(&c);
        }
        else if (strcmp(key, "you") == 0) {
            if (j_peek(&c) == '"') {
                j_string(&c, str, sizeof str);
                t->you = (str[0] == 'x' || str[0] == 'X') ? 'X' : (str[0] == 'o' || str[0] == 'O') ? 'O' : 0;
            } else j_skip(&c);
        }
        else if (strcmp(key, "player-index") == 0) t->player_index = clamp_int(j_int_or(&c, -1));
        else j_skip(&c); /* unknown field */
    }
    if (c.bad) return ARBITER_UNKNOWN;

    if (saw_action) {
        req->game = ARBITER_TICTACTOE;
    } else if (saw_othello) {
        if (o->board_size != 8 && o->board_size != 10)
            o->board_size = o->n_board >= 100 ? 10 : 8;
        int squares = o->board_size * o->board_size;
        for (int i = 0; i < o->n_blocked; i++)
            if (o->blocked_squares[i] >= 0 && o->blocked_squares[i] < squares) o->blocked[o->blocked_squares[i]] = 1;
        for (int i = o->n_board; i < squares; i++) o->board[i] = 0;
        req->game = ARBITER_OTHELLO;
    }
    return req->game;
}

/* ---- I/O ---------------------------------------------------------------- */

int arbiter_read(arbiter_request *req) {
    static char *buf = NULL;
    static size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    if (n <= 0) return 0;
    req->received_ms = arbiter_now_ms();
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) n--;
    arbiter_parse(buf, (size_t)n, req);
    return 1;
}

void arbiter_reply_raw(const char *json) {
    char small[512];
    size_t len = strlen(json);
    char *line = len + 2 <= sizeof small ? small : (char *)malloc(len + 2);
    if (!line) { /* out of memory: two writes still make one line */
        fputs(json, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        return;
    }
    memcpy(line, json, len);
    line[len] = '\n';
    fwrite(line, 1, len + 1, stdout);
    fflush(stdout);
    if (line != small) free(line);
}

void arbiter_reply_othello(int square, const char *extra) {
    char buf[512];
    const char *sep = extra && *extra ? "," : "";
    if (!extra) extra = "";
    if (strlen(extra) > 400) { /* long extras: build on the heap */
        size_t n = strlen(extra) + 64;
        char *big = (char *)malloc(n);
        if (big) {
            if (square < 0) snprintf(big, n, "{\"move\":\"--\"%s%s}", sep, extra);
            else snprintf(big, n, "{\"move\":%d%s%s}", square, sep, extra);
            arbiter_reply_raw(big);
            free(big);
            return;
        }
        sep = extra = "";
    }
    if (square < 0) snprintf(buf, sizeof buf, "{\"move\":\"--\"%s%s}", sep, extra);
    else snprintf(buf, sizeof buf, "{\"move\":%d%s%s}", square, sep, extra);
    arbiter_reply_raw(buf);
}

void arbiter_reply_tictactoe(int row, int col) {
    char buf[64];
    snprintf(buf, sizeof buf, "{\"name\":\"\",\"play\":\"%d-%d\",\"error\":null}", row, col);
    arbiter_reply_raw(buf);
}

void arbiter_reply_name(const char *name) {
    char buf[160];
    size_t n = 0;
    n += (size_t)snprintf(buf, sizeof buf, "{\"name\":\"");
    for (; *name && n < sizeof buf - 8; name++) /* keep it valid JSON */
        if (*name != '"' && *name != '\\' && (unsigned char)*name >= 0x20) buf[n++] = *name;
    memcpy(buf + n, "\"}", 3);
    arbiter_reply_raw(buf);
}

/* ---- Time --------------------------------------------------------------- */

int64_t arbiter_now_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t arbiter_deadline_ms(int64_t start_ms, int64_t budget_ms, int64_t remaining_ms, int moves_left) {
    int64_t t = budget_ms >= 0 ? budget_ms / 2 : 20;
    if (remaining_ms >= 0) {
        int64_t share = remaining_ms / (moves_left > 0 ? moves_left : 1);
        if (share < t) t = share;
    }
    if (t < 1) t = 1;
    return start_ms + t;
}

int arbiter_time_up(int64_t deadline_ms) {
    return arbiter_now_ms() >= deadline_ms;
}

/* ---- Random numbers ----------------------------------------------------- */

static uint64_t rng_s[4];
static int rng_ready = 0;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void arbiter_random_seed(uint64_t seed) {
    for (int i = 0; i < 4; i++) rng_s[i] = splitmix64(&seed);
    rng_ready = 1;
}

/* A native run under `arbiter play cmd:...` gets ARBITER_RANDOM: in hex, the
 * bytes the sandbox's random_get would have returned. Seeding from it makes
 * the native build draw the same numbers as the WebAssembly build. */
static int seed_from_env(uint64_t *seed) {
    const char *hex = getenv("ARBITER_RANDOM");
    unsigned char bytes[sizeof *seed];
    if (!hex) return 0;
    for (size_t i = 0; i < sizeof bytes; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * i + (size_t)k];
            int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
            if (d < 0) return 0;
            v = v * 16 + (unsigned)d;
        }
        bytes[i] = (unsigned char)v;
    }
    memcpy(seed, bytes, sizeof bytes); /* little-endian, as on wasm32 */
    return 1;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t arbiter_random(void) {
    if (!rng_ready) {
        uint64_t seed = 0x2545F4914F6CDD1Dull; /* used if the host gives nothing */
        if (!seed_from_env(&seed)) (void)getentropy(&seed, sizeof seed);
        arbiter_random_seed(seed);
    }
    uint64_t result = rotl(rng_s[1] * 5, 7) * 9;
    uint64_t t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return result;
}

uint32_t arbiter_random_below(uint32_t n) {
    if (n == 0) return 0;
    return (uint32_t)(((arbiter_random() >> 32) * (uint64_t)n) >> 32);
}
