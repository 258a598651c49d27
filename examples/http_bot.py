"""A tic-tac-toe bot that is an HTTP server, speaking botsarena's messages.

The referee POSTs one JSON object per request: `init` once per game, then
`play-turn` on each of the bot's turns with the board as "row-col" keys. The
answer is one JSON object in the response body; only `play` is read.
It also plays Othello: there the body is the engine JSON a sandboxed bot reads.

Try it:
  python3 examples/http_bot.py --port 8000 &
  arbiter play tictactoe http://127.0.0.1:8000/ house:tictactoe-random
"""
import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
KEYS = [f"{r}-{c}" for r in range(3) for c in range(3)]


def tictactoe(message):
    if message["action"] == "init":
        return {"name": "http-example"}
    board = [message["board"][key] for key in KEYS]
    me = message["you"]
    them = "O" if me == "X" else "X"
    empty = [i for i, mark in enumerate(board) if mark == ""]
    # Win if we can, block if we must, else the centre, a corner, anything.
    for mark in (me, them):
        for line in LINES:
            marks = [board[i] for i in line]
            if marks.count(mark) == 2 and marks.count("") == 1:
                return {"name": "", "play": KEYS[line[marks.index("")]], "error": None}
    for i in [4, 0, 2, 6, 8] + empty:
        if i in empty:
            return {"name": "", "play": KEYS[i], "error": None}


def othello(message):
    legal = message.get("legal_moves") or []
    return {"move": legal[0] if legal else "pass"}


class Bot(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        message = json.loads(self.rfile.read(length))
        answer = tictactoe(message) if message.get("game") == "tictactoe" else othello(message)
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Bot)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()
