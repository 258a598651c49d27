// People playing house bots in a real browser (/bots/{name}/play, then
// /play/{id}): a guest plays a whole Othello game by clicking legal squares
// (play.js sends each move and redraws the board); a keyboard-only player
// starts a tic-tac-toe game and plays it to the end with Tab, the arrow
// keys and Enter/Space, the focus landing on a legal square after each
// redraw, and never beats the perfect bot; the same move sent twice is
// played once (the second answers 409, "earlier position"); with
// JavaScript off a game plays to the end one page per move; axe-core (WCAG
// 2.1 A and AA) finds no violation on the choice page and on games' pages
// (the person's turn, finished) at 1280 and 375 px, and a 10×10 board fits
// 375 px without sideways scrolling. No page logs a JavaScript error.
//
// Every game comes from 127.0.0.1, which may play 2 games at once (30 an
// hour): each test ends (or resigns) its game before the next starts, even
// when it fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launchBrowser, requireBuilt, startServer, until, watchErrors } from './support.mjs';

// What #play-status says once a game is over.
const OVER = /^(?:You won \(|.+ won \(|A draw \(|Aborted\.)/;
const WIDTHS = [1280, 375];

let server;
let browser;
let context;
let errors;
// Games played to the end, by kind: their pages are checked by axe-core.
const finished = {};

before(async () => {
  requireBuilt();
  // No ladder matches are needed (the house bots are playable at once), so
  // no workers: the bots' moves have the cores to themselves.
  server = await startServer({ workers: 0 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
  errors = watchErrors(context);
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

// Starts a game against `bot` through the choice page's form (clicks) and
// returns its id, once its page is open.
async function start(page, bot, { game, side = 'first', name } = {}) {
  const response = await page.goto(`/bots/${bot}/play`);
  assert.equal(response.status(), 200);
  if (game) await page.locator('#play-game').selectOption(game);
  await page.locator(`input[name="side"][value="${side}"]`).check();
  if (name !== undefined) await page.locator('#play-name').fill(name);
  await page.getByRole('button', { name: 'Start the game' }).click();
  await page.waitForURL(/\/play\/\d+$/);
  return Number(/\/play\/(\d+)$/.exec(page.url())[1]);
}

// The game as /play/{id}/state tells it (with the page's cookies).
async function state(request, id) {
  const response = await request.get(`/play/${id}/state`);
  assert.equal(response.status(), 200);
  return response.json();
}

// Waits until game `id` is over, so the address may start another.
function ended(request, id) {
  return until(`game ${id} to end`, async () => (await state(request, id)).status !== 'running', { timeout: 30_000, every: 200 });
}

// Resigns game `id` with its page's Resign button.
async function resign(page, id) {
  await page.getByRole('button', { name: 'Resign' }).click();
  await ended(page.request, id);
}

// After each test, pass or fail: game `id` (if it started) is over.
async function cleanUp(page, id) {
  if (!id || (await state(page.request, id)).status !== 'running') return;
  await page.request.post(`/play/${id}`, { form: { resign: '1' }, maxRedirects: 0 });
  await ended(page.request, id);
}

// Waits until the person may move in game `id` (or it is over), and then
// for the page to show the legal squares: a game is not the person's to
// move for a moment after its page first loads (the bot's module may be
// loading), and play.js must hear of the turn at once, not at the end of a
// long wait (the page used to stay empty for 20 s).
async function ready(page, id) {
  await until(`game ${id} to await my move`, async () => {
    const game = await state(page.request, id);
    return game.legal.length > 0 || game.status !== 'running';
  }, { timeout: 15_000, every: 100 });
  if ((await state(page.request, id)).status === 'running') {
    await page.locator('#play-board button.legal').first().waitFor({ timeout: 5_000 });
  }
}

// What #play-status says; '' while the page is between two loads.
async function statusOf(page) {
  return (await page.locator('#play-status').textContent({ timeout: 5_000 }).catch(() => '')).trim();
}

// The moves #play-moves lists (comma-separated: a tic-tac-toe square is
// named in words, "top left").
async function movesOf(page) {
  return (await page.locator('#play-moves').textContent()).trim().split(/,\s*/).filter(Boolean);
}

// A tic-tac-toe square as the page names it: `0-1` is "top middle".
function words(square) {
  const [row, column] = square.split('-').map(Number);
  if (row === 1 && column === 1) return 'centre';
  return `${['top', 'middle', 'bottom'][row]} ${['left', 'middle', 'right'][column]}`;
}

// The page a game ends on (play.js reloads itself into it): the result in
// words, the replay's link (a replay of the game) and "Play again".
async function finalPage(page, id, bot) {
  await page.getByRole('link', { name: 'Download the replay' }).waitFor({ timeout: 15_000 });
  const status = await statusOf(page);
  assert.match(status, OVER);
  assert.doesNotMatch(status, /Aborted/, 'the game was played out, not aborted');
  assert.equal(await page.getByRole('link', { name: 'Download the replay' }).getAttribute('href'), `/play/${id}/replay.json`);
  assert.equal(await page.getByRole('link', { name: 'Play again' }).getAttribute('href'), `/bots/${bot}/play`);
  assert.equal(await page.locator('#play-board button').count(), 0, 'no square and no Resign button once over');
  const replay = await page.request.get(`/play/${id}/replay.json`);
  assert.equal(replay.status(), 200);
  assert.equal((await replay.json()).games.length, 1, 'the replay holds the game');
  return status;
}

test('a guest plays a whole Othello game against othello-random by clicking legal squares', async (t) => {
  const page = await context.newPage();
  let id;
  try {
    id = await start(page, 'othello-random', { game: 'othello:std', name: 'Clicker' });
    assert.equal((await page.locator('h1').innerText()).trim(), 'Clicker (guest) against othello-random');
    assert.equal(await page.locator('table.play-grid.othello').count(), 1, 'an Othello board');
    await ready(page, id);
    const board = page.locator('#play-board');
    let clicks = 0;
    const waits = [];
    for (;;) {
      const waited = Date.now();
      const next = await until('my turn or the end', async () => {
        if (OVER.test(await statusOf(page))) return 'over';
        if (await board.locator('button.legal:enabled').count()) return 'move';
        return null;
      }, { timeout: 30_000, every: 50 });
      waits.push(Date.now() - waited);
      if (next === 'over') break;
      assert.match(await statusOf(page), /(?:^|\. )Your move \(black\)\./);
      const revision = Number(await board.getAttribute('data-revision'));
      const square = await board.locator('button.legal:enabled').first().getAttribute('value');
      await board.locator('button.legal:enabled').first().click();
      clicks += 1;
      assert.ok(clicks < 70, 'the game ends');
      // The board is redrawn past the move, without a page load.
      await until(`${square} to be played`, async () => Number(await board.getAttribute('data-revision')) > revision, { timeout: 15_000, every: 50 });
    }
    t.diagnostic(`${clicks} squares clicked; waits for the bot (ms): ${waits.join(' ')}`);
    const status = await finalPage(page, id, 'othello-random');
    assert.match(status, /discs\)\.$/, status);
    const moves = await movesOf(page);
    assert.ok(moves.length > 20, `the moves are listed (${moves.length}: ${moves.join(' ')})`);
    assert.ok(moves.every((m) => /^(?:[a-h][1-8]|--)$/.test(m)), `Othello squares: ${moves.join(' ')}`);
    assert.ok(clicks >= 20, `the person made ${clicks} moves`);
    finished.othello = id;
  } finally {
    await cleanUp(page, id);
    await page.close();
  }
});

test('keyboard only: a tic-tac-toe game against tictactoe-perfect, never won by the person', async () => {
  const page = await context.newPage();
  let id;
  // Presses Tab until `reached` holds in the page.
  const tabTo = async (what, reached) => {
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(reached)) return;
    }
    throw new Error(`Tab never reached ${what}`);
  };
  // The legal square that has the focus, if one has.
  const focused = () => page.evaluate(() => {
    const e = document.activeElement;
    return e && e.matches('#play-board button.legal') ? e.value : null;
  });
  try {
    // The form by keyboard: its defaults (tic-tac-toe, first, untimed)
    // stand; a name is typed; Enter on the submit button.
    await page.goto('/bots/tictactoe-perfect/play');
    await tabTo('the name field', () => document.activeElement?.id === 'play-name');
    await page.keyboard.type('Keys');
    await tabTo('the submit button', () => document.activeElement?.textContent.trim() === 'Start the game');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/play\/\d+$/);
    id = Number(/\/play\/(\d+)$/.exec(page.url())[1]);
    assert.equal((await page.locator('h1').innerText()).trim(), 'Keys (guest) against tictactoe-perfect');

    // The first move: Tab into the board (later ones start where a redraw
    // put the focus).
    await ready(page, id);
    await tabTo('a legal square', () => document.activeElement?.matches('#play-board button.legal'));
    const board = page.locator('#play-board');
    let turns = 0;
    for (;;) {
      const here = await focused();
      assert.ok(here, 'the focus is on a legal square');
      const legal = await board.locator('button.legal').count();
      // From the first legal square (where the focus is), down or else
      // right reaches another one when there is another.
      await page.keyboard.press('ArrowDown');
      if ((await focused()) === here) await page.keyboard.press('ArrowRight');
      const there = await focused();
      assert.ok(there, 'the arrows keep the focus on a legal square');
      if (legal > 1) assert.notEqual(there, here, `an arrow moved the focus from ${here} (${legal} legal squares)`);
      const revision = Number(await board.getAttribute('data-revision'));
      await page.keyboard.press(turns % 2 ? ' ' : 'Enter');
      turns += 1;
      assert.ok(turns <= 5, 'X moves at most 5 times');
      // After the bot's answer the board is redrawn with the focus on a
      // legal square, or the game is over.
      const next = await until('my next turn or the end', async () => {
        if (OVER.test(await statusOf(page))) return 'over';
        const now = Number(await board.getAttribute('data-revision', { timeout: 1_000 }).catch(() => '-1'));
        if (now >= revision + 2 && (await focused())) return 'move';
        return null;
      }, { timeout: 30_000, every: 50 });
      if (next === 'over') break;
      assert.match(await statusOf(page), /^(?:tictactoe-perfect played (?:centre|(?:top|middle|bottom) (?:left|middle|right))\. )?Your move \(X\)\. Untimed, but each move must come within 15 minutes \(\d+:\d\d left for this one\)\.$/);
      assert.equal(await board.locator(`.mark[aria-label="${words(there)}, X"]`).count(), 1, `${there} was played`);
    }
    const status = await finalPage(page, id, 'tictactoe-perfect');
    assert.match(status, /^(?:A draw \(a full grid\)|tictactoe-perfect won \(three in a row\))\.$/, status);
    assert.doesNotMatch(status, /You won/);
    assert.ok((await movesOf(page)).length >= 5);
    assert.ok(turns >= 3, `X moved ${turns} times`);
    finished.tictactoe = id;
  } finally {
    await cleanUp(page, id);
    await page.close();
  }
});

test('the same move sent twice is played once: the second answers 409, "earlier position"', async () => {
  const page = await context.newPage();
  let id;
  try {
    id = await start(page, 'tictactoe-random', { name: 'Twice' });
    const before = await until('my turn', async () => {
      const game = await state(page.request, id);
      return game.legal.length ? game : null;
    }, { timeout: 15_000, every: 100 });
    assert.equal(before.revision, 0);
    // Two posts of the board's form at once, with the page's cookies (the
    // game's key): a double click that slipped past the script.
    const send = () => page.request.post(`/play/${id}`, { form: { revision: String(before.revision), square: '1-1' }, maxRedirects: 0 });
    const answers = await Promise.all([send(), send()]);
    const statuses = answers.map((r) => r.status()).sort();
    assert.deepEqual(statuses, [303, 409], `one move played, one refused (${statuses})`);
    assert.equal(answers.find((r) => r.status() === 303).headers().location, `/play/${id}`);
    const body = await answers.find((r) => r.status() === 409).text();
    assert.match(body, /id="play-error"[^>]*>[^<]*earlier position/, 'the refusal shows on the game\'s page');

    // The board shows one X, on 1-1.
    await page.goto(`/play/${id}`);
    await page.locator('#play-board .mark[aria-label="centre, X"]').waitFor();
    assert.equal(await page.locator('#play-board .mark[aria-label$=", X"]').count(), 1, 'exactly one move by the person');
    const game = await state(page.request, id);
    assert.equal(game.moves[0], '1-1');
    assert.ok(game.moves.length <= 2, `the person's move and at most the bot's (${game.moves})`);
    assert.equal(game.counts[0], 1, 'one mark of the person\'s');
    await ready(page, id);
    await resign(page, id);
  } finally {
    await cleanUp(page, id);
    await page.close();
  }
});

test('without JavaScript a tic-tac-toe game plays to the end, one page per move', async () => {
  const plain = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false });
  const plainErrors = watchErrors(plain);
  const page = await plain.newPage();
  let id;
  try {
    id = await start(page, 'tictactoe-random', { name: 'Plain' });
    const url = `/play/${id}`;
    let clicks = 0;
    let loads = 0;
    for (;;) {
      const status = await statusOf(page);
      if (OVER.test(status)) break;
      const legal = page.locator('#play-board button.legal');
      if (await legal.count()) {
        assert.match(status, /(?:^|\. )Your move \(X\)\./);
        assert.equal(await page.locator('noscript meta[http-equiv="refresh"]').count(), 0, 'no refresh on the person\'s turn');
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(url)),
          legal.first().click(),
        ]);
        assert.equal(response.status(), 303, 'a move answers with a redirect to the game');
        await page.waitForLoadState();
        assert.ok(page.url().endsWith(url), page.url());
        clicks += 1;
        assert.ok(clicks <= 5, 'X moves at most 5 times');
        continue;
      }
      // Not the person's turn yet: the page refreshes itself (<noscript>
      // meta refresh); load it again after a moment either way.
      assert.equal(await page.locator('noscript meta[http-equiv="refresh"]').count(), 1, `a refresh while "${status}"`);
      loads += 1;
      assert.ok(loads < 40, 'the bot answers');
      await new Promise((r) => setTimeout(r, 500));
      await page.goto(url).catch((error) => {
        if (!/ERR_ABORTED|interrupted by another navigation/.test(error.message)) throw error;
      });
    }
    assert.ok(clicks >= 3, `the person moved ${clicks} times`);
    await finalPage(page, id, 'tictactoe-random');
    assert.ok((await movesOf(page)).length >= 5);
  } finally {
    await cleanUp(page, id);
    await plain.close();
  }
  assert.deepEqual(plainErrors, []);
});

test('axe-core finds no violation on the play pages at 1280 and 375 px; a 10×10 board fits 375 px', async (t) => {
  const page = await context.newPage();
  let id;
  try {
    await page.goto('/bots/othello-greedy/play');
    const options = await page.locator('#play-game option').evaluateAll((os) => os.map((o) => o.value));
    const game = options.includes('othello:grand') ? 'othello:grand' : 'othello:std';
    t.diagnostic(`othello-greedy plays ${options.join(', ')}: checking ${game}`);
    id = await start(page, 'othello-greedy', { game, name: 'Axe' });
    await ready(page, id);
    const found = [];
    const paths = ['/bots/othello-greedy/play', `/play/${id}`];
    for (const kind of ['othello', 'tictactoe']) {
      if (finished[kind]) paths.push(`/play/${finished[kind]}`);
      else found.push(`no finished ${kind} game to check (its test failed)`);
    }
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of paths) {
        const response = await page.goto(path);
        assert.equal(response.status(), 200, path);
        if (path === `/play/${id}`) {
          assert.ok(await page.locator('#play-board button.legal').count(), 'checked on the person\'s turn');
        }
        if (await page.locator('#replay.replay').count()) await page.locator('#replay.replay[data-ready]').waitFor({ timeout: 15_000 });
        for (const v of await axeViolations(page)) found.push(`${width} px ${path}: ${v}`);
        if (width === 375 && path === `/play/${id}`) {
          const wide = await page.evaluate(() => document.documentElement.scrollWidth);
          t.diagnostic(`the ${game} page at 375 px is ${wide} px wide`);
          assert.ok(wide <= 376, `the ${game} board needs no sideways scrolling at 375 px (${wide} px)`);
        }
      }
    }
    await page.goto(`/play/${id}`);
    await resign(page, id);
    assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  } finally {
    await cleanUp(page, id);
    await page.close();
  }
});

// Two faults the live page had: squares that showed 20 s late, and
// finished pages that reloaded themselves.

// The first game against a bot (here othello-ab-weak, which no other test
// plays) loads its module while the page loads: the person's turn opens
// after the page, at the same revision.
test('with JavaScript the legal squares show as soon as the person may move', async () => {
  const page = await context.newPage();
  let id;
  try {
    id = await start(page, 'othello-ab-weak', { game: 'othello:std', name: 'Eager' });
    await page.locator('#play-board button.legal').first().waitFor({ timeout: 5_000 });
  } finally {
    await cleanUp(page, id);
    await page.close();
  }
});

test('a finished game\'s page stays put: it does not reload itself', async () => {
  assert.ok(finished.tictactoe, 'a finished game');
  const page = await context.newPage();
  await page.goto(`/play/${finished.tictactoe}`);
  let loads = 0;
  page.on('load', () => { loads += 1; });
  await new Promise((r) => setTimeout(r, 4_000));
  await page.close();
  assert.equal(loads, 0, `the finished page loaded itself ${loads} times in 4 s`);
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(errors, []);
});
