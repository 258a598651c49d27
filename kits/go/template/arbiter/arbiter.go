// Package arbiter is the Arbiter bot protocol for Go: one JSON request line
// on stdin per turn, one JSON reply line on stdout (docs/spec/protocol.md).
//
//	func main() { arbiter.Run(myBot{}) }
//
// The same program runs natively (go build; arbiter play othello cmd:./bot ...)
// and as a wasip1 module (GOOS=wasip1 GOARCH=wasm go build).
package arbiter

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"time"
)

// Pass is the Othello pass move.
const Pass = -1

// OthelloRequest is one Othello move request (docs/spec/othello.md).
type OthelloRequest struct {
	Board          []int          `json:"board"`           // size*size: 0 empty, 1 black, 2 white
	Color          int            `json:"color"`           // 1 or 2: the colour to move (yours)
	LegalMoves     []int          `json:"legal_moves"`     // empty: answer a pass
	GameMode       string         `json:"game_mode"`       // std anti grand octagon reversi
	BoardSize      int            `json:"board_size"`      // 8 or 10
	BlockedSquares []int          `json:"blocked_squares"` // octagon's blocked squares
	Placed         map[string]int `json:"placed"`          // discs placed per colour ("1", "2")
	RemainingMs    int64          `json:"remaining_ms"`    // clock left in this leg
	BudgetMs       int64          `json:"budget_ms"`       // the most this move may take
	MatchID        int64          `json:"match_id"`
	Leg            int            `json:"leg"`
	Revision       int            `json:"revision"`
	History        []HistoryEntry `json:"history"`
}

// HistoryEntry is one move of the leg after the opening.
type HistoryEntry struct {
	Color       int             `json:"color"`
	Participant json.RawMessage `json:"participant"`
	Move        json.RawMessage `json:"move"`
	AtMs        int64           `json:"at_ms"`
}

// TicTacToeRequest is one tic-tac-toe message (docs/spec/tictactoe.md).
// Cells is the grid, index row*3+col, each "", "X" or "O".
type TicTacToeRequest struct {
	Action      string `json:"action"` // "init" or "play-turn"
	You         string `json:"you"`    // "X" or "O"
	PlayerIndex int    `json:"player-index"`
	GameID      string `json:"game-id"`
	Cells       [9]string
}

// Bot is what a bot implements. Othello returns a square of
// req.LegalMoves (or Pass when it is empty); TicTacToe returns an empty
// cell 0..8. A bot for one game only may return anything for the other.
type Bot interface {
	Othello(req *OthelloRequest, d *Deadline) int
	TicTacToe(req *TicTacToeRequest, d *Deadline) int
}

// Deadline is the time for this move. time.Now is the sandbox's virtual
// clock (fuel turned into milliseconds), so a search that stops on it plays
// the same moves on every machine. Check TimeUp between search steps: a
// goroutine cannot interrupt a busy one on wasm (one thread, no preemption).
type Deadline struct {
	Start  time.Time
	Target time.Duration
}

// NewDeadline aims at fraction of min(budget, remaining/movesLeft).
func NewDeadline(budgetMs, remainingMs int64, movesLeft int, fraction float64) *Deadline {
	b := budgetMs
	if remainingMs > 0 && movesLeft > 0 && remainingMs/int64(movesLeft) < b {
		b = remainingMs / int64(movesLeft)
	}
	if b < 0 {
		b = 0
	}
	return &Deadline{Start: time.Now(), Target: time.Duration(float64(b) * fraction * float64(time.Millisecond))}
}

// Elapsed is the time spent on this move so far.
func (d *Deadline) Elapsed() time.Duration { return time.Since(d.Start) }

// TimeUp says whether the target has been used up.
func (d *Deadline) TimeUp() bool { return time.Since(d.Start) >= d.Target }

// HostRand is a generator seeded from the host (random_get): in the sandbox
// the stream is seeded by the match, so games replay exactly.
func HostRand() *mrand.Rand {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])))
}

// Log writes a line to stderr, the bot's log (stdout carries replies only).
func Log(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// CellName is "R-C" for a tic-tac-toe cell 0..8.
func CellName(cell int) string { return fmt.Sprintf("%d-%d", cell/3, cell%3) }

// SquareName is "d3" for an Othello square ("j0" for the tenth row on 10x10).
func SquareName(square, size int) string {
	row, col := square/size, square%size
	r := row + 1
	if size == 10 {
		r %= 10
	}
	return fmt.Sprintf("%c%d", 'a'+col, r)
}

// OthelloReply is the reply line for a move.
func OthelloReply(move int) []byte { return []byte(fmt.Sprintf("{\"move\":%d}\n", move)) }

// TicTacToeReply is the reply line for a cell.
func TicTacToeReply(name string, cell int) []byte {
	n, _ := json.Marshal(name)
	return []byte(fmt.Sprintf("{\"name\":%s,\"play\":\"%s\",\"error\":null}\n", n, CellName(cell)))
}

type probe struct {
	Action *string         `json:"action"`
	Board  json.RawMessage `json:"board"`
}

// Answer turns one request line into one reply line.
func Answer(bot Bot, name string, line []byte) []byte {
	var p probe
	if err := json.Unmarshal(line, &p); err != nil {
		Log("cannot read request: %v", err)
		return OthelloReply(Pass)
	}
	if p.Action != nil {
		var req TicTacToeRequest
		_ = json.Unmarshal(line, &req)
		if req.Action != "play-turn" {
			n, _ := json.Marshal(name)
			return []byte(fmt.Sprintf("{\"name\":%s}\n", n))
		}
		var cells map[string]string
		if err := json.Unmarshal(p.Board, &cells); err != nil {
			Log("cannot read board: %v", err)
		}
		for i := range req.Cells {
			req.Cells[i] = cells[CellName(i)]
		}
		return TicTacToeReply(name, bot.TicTacToe(&req, NewDeadline(100, 0, 1, 0.5)))
	}
	var req OthelloRequest
	if err := json.Unmarshal(line, &req); err != nil {
		Log("cannot read request: %v", err)
		return OthelloReply(Pass)
	}
	if req.BoardSize == 0 {
		req.BoardSize = 8
	}
	if len(req.LegalMoves) == 0 {
		return OthelloReply(Pass)
	}
	return OthelloReply(bot.Othello(&req, NewDeadline(req.BudgetMs, req.RemainingMs, 20, 0.5)))
}

// Run answers request lines from stdin until it ends.
func Run(bot Bot, name string) {
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			// One write per reply: one host call.
			if _, werr := os.Stdout.Write(Answer(bot, name, line)); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
