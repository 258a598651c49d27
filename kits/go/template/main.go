// my-bot: greedy Othello (all five modes) and perfect tic-tac-toe.
// Replace Othello / TicTacToe with your own. Build: sh build.sh
package main

import (
	"my-bot/arbiter"
)

type bot struct{ rng interface{ IntN(int) int } }

var dirs = [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}

// flips counts the discs that placing me on square would flip. Blocked
// octagon squares are 0 on the board, so a line stops there as at an empty.
func flips(board []int, size, square, me int) int {
	opp := 3 - me
	row, col := square/size, square%size
	total := 0
	for _, d := range dirs {
		r, c, n := row+d[0], col+d[1], 0
		for r >= 0 && r < size && c >= 0 && c < size && board[r*size+c] == opp {
			r, c, n = r+d[0], c+d[1], n+1
		}
		if n > 0 && r >= 0 && r < size && c >= 0 && c < size && board[r*size+c] == me {
			total += n
		}
	}
	return total
}

// Othello plays the legal move that flips the most discs (in anti: the
// fewest); ties are broken with the host-seeded generator.
func (b *bot) Othello(req *arbiter.OthelloRequest, d *arbiter.Deadline) int {
	sign := 1
	if req.GameMode == "anti" {
		sign = -1
	}
	var best []int
	bestScore := 0
	for i, m := range req.LegalMoves {
		s := sign * flips(req.Board, req.BoardSize, m, req.Color)
		if i == 0 || s > bestScore {
			bestScore, best = s, best[:0]
		}
		if s == bestScore {
			best = append(best, m)
		}
	}
	return best[b.rng.IntN(len(best))]
}

var lines = [8][3]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6}}

func won(c *[9]string) bool {
	for _, l := range lines {
		if c[l[0]] != "" && c[l[0]] == c[l[1]] && c[l[1]] == c[l[2]] {
			return true
		}
	}
	return false
}

func other(m string) string {
	if m == "X" {
		return "O"
	}
	return "X"
}

// negamax scores the grid for me to move: 1 win, 0 draw, -1 loss.
func negamax(c *[9]string, me string) int {
	if won(c) {
		return -1 // the previous move won
	}
	best, moved := -2, false
	for i := range c {
		if c[i] == "" {
			moved = true
			c[i] = me
			s := -negamax(c, other(me))
			c[i] = ""
			if s > best {
				best = s
			}
			if best == 1 {
				break
			}
		}
	}
	if !moved {
		return 0
	}
	return best
}

// TicTacToe plays perfectly (minimax over the whole tree).
func (b *bot) TicTacToe(req *arbiter.TicTacToeRequest, d *arbiter.Deadline) int {
	c := req.Cells
	best, bestCell := -3, -1
	for i := range c {
		if c[i] == "" {
			c[i] = req.You
			s := -negamax(&c, other(req.You))
			c[i] = ""
			if s > best {
				best, bestCell = s, i
			}
		}
	}
	return bestCell
}

func main() {
	arbiter.Run(&bot{rng: arbiter.HostRand()}, "my-bot")
}
