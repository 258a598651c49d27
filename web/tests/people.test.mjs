// Games against bots that belong to people, their viewers and the play
// page's layout, in a real browser against a fresh `arbiter serve`:
//
// - a signed-in person starts a game in one browser and resumes it (moves,
//   resigns) from a second browser signed in to the same account, where
//   "My games" lists it; a third, signed-out browser watching it is told
//   whose move it is, never "Your move", and gets no squares;
// - a guest's game joins their account when they sign up in that browser;
// - the per-client limit counts a signed-in account apart from its address;
// - the replay viewer of finished people games of both board games draws
//   the real board (Othello 8×8 with its discs, tic-tac-toe with its
//   marks), and a tic-tac-toe match page has the same viewer;
// - the play page puts the board first (left at 1280 px, squares ≥ 40 px at
//   375 px), checked from its screenshots' geometry; the form defaults to
//   standard Othello and draws radio buttons at their size beside their
//   labels; legal-move dots contrast ≥ 3:1 with the felt;
// - axe-core (WCAG 2.1 A/AA) is clean on "My games" and the choice page at
//   1280 and 375 px. No page logs a JavaScript error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

let server;
let browser;
let errors = [];
const contexts = [];
const password = 'correct horse battery staple';
const user = `owner${Date.now() % 100000}`;

before(async () => {
  requireBuilt();
  // One worker: the house bots' ladder matches give a tic-tac-toe match
  // page to check; the people games have cores besides.
  server = await startServer({ workers: 1 });
  browser = await launchBrowser();
});

after(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.stop();
});

// A fresh browser (its own cookies), as another device would be.
async function newBrowser({ width = 1280, javaScript = true } = {}) {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width, height: 900 }, javaScriptEnabled: javaScript });
  contexts.push(context);
  const found = watchErrors(context);
  errors = errors.concat(found);
  context.errorsFound = found;
  return context;
}

async function signUp(page, name) {
  await page.goto('/signup');
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/account');
}

async function signIn(page, name) {
  await page.goto('/signin');
  await page.getByLabel('User name').fill(name);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
}

// Starts a game against `bot` with the choice page's form; its id.
async function start(page, bot, { game, name } = {}) {
  const response = await page.goto(`/bots/${bot}/play`);
  assert.equal(response.status(), 200);
  if (game) await page.locator('#play-game').selectOption(game);
  await page.locator('input[name="side"][value="first"]').check();
  if (name !== undefined) await page.locator('#play-name').fill(name);
  await page.getByRole('button', { name: 'Start the game' }).click();
  await page.waitForURL(/\/play\/\d+$/);
  return Number(/\/play\/(\d+)$/.exec(page.url())[1]);
}

async function state(request, id) {
  const response = await request.get(`/play/${id}/state`);
  assert.equal(response.status(), 200);
  return response.json();
}

// Waits until `request`'s person may move in game `id` (or it is over).
function myTurn(request, id) {
  return until(`game ${id} to await the person's move`, async () => {
    const game = await state(request, id);
    return (game.mine && game.legal.length > 0) || game.status !== 'running' ? game : null;
  }, { timeout: 20_000, every: 100 });
}

// Plays game `id` to its end through its page's form (the first legal
// square each turn), as `page`'s browser; the final state.
async function playOut(page, id) {
  for (let turn = 0; turn < 80; turn++) {
    const game = await myTurn(page.request, id);
    if (game.status !== 'running') return game;
    await page.goto(`/play/${id}`);
    const square = page.locator('#play-board button.legal').first();
    await square.waitFor({ timeout: 10_000 });
    const revision = game.revision;
    await square.click();
    await until('the move to be played', async () => (await state(page.request, id)).revision > revision, { timeout: 15_000, every: 50 });
  }
  throw new Error(`game ${id} did not end`);
}

// Resigns game `id` if it is still running (after a failure too).
async function cleanUp(page, id) {
  if (!id) return;
  const game = await state(page.request, id);
  if (game.status !== 'running') return;
  const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content').catch(() => null);
  await page.request.post(`/play/${id}`, { form: { resign: '1', ...(csrf ? { csrf } : {}) }, maxRedirects: 0 });
  await until(`game ${id} to end`, async () => (await state(page.request, id)).status !== 'running', { timeout: 30_000, every: 200 });
}

const finished = {};

test('a game started in one browser is resumed and resigned from another browser of the same account', async () => {
  const first = await (await newBrowser()).newPage();
  await signUp(first, user);
  const id = await start(first, 'tictactoe-random');
  const second = await (await newBrowser()).newPage();
  const watcher = await (await newBrowser()).newPage();
  try {
    const opening = await myTurn(first.request, id);
    assert.equal(opening.mine, true);
    assert.equal(opening.person, user, 'the game carries the account\'s name');

    // The second browser: signed in to the same account, no cookie of the
    // game's. "My games" lists it first, as being played.
    await signIn(second, user);
    await second.getByRole('link', { name: 'My games' }).click();
    await second.waitForURL('**/games');
    const running = second.locator('#running-games a');
    assert.equal(await running.count(), 1);
    assert.match(await running.first().innerText(), /^Game \d+: Tic-tac-toe.* against tictactoe-random$/);
    await running.first().click();
    await second.waitForURL(`**/play/${id}`);
    assert.match((await second.locator('#play-status').innerText()).trim(), /^Your move \(X\)\./);
    const legal = second.locator('#play-board button.legal');
    assert.ok(await legal.count() > 0, 'the second browser gets the legal squares');
    assert.equal(await second.getByRole('button', { name: 'Resign' }).count(), 1, 'and the Resign button');
    // Tic-tac-toe's squares are named in words, with no 0–2 headers.
    assert.equal(await second.locator('#play-board th').count(), 0, 'no row or column headers');
    const names = await second.locator('#play-board td.sq > *').evaluateAll((cells) => cells.map((c) => c.getAttribute('aria-label').split(',')[0]));
    assert.deepEqual(names, ['top left', 'top middle', 'top right', 'middle left', 'centre', 'middle right', 'bottom left', 'bottom middle', 'bottom right']);
    const square = await legal.first().getAttribute('value');
    await legal.first().click();
    await until('the second browser\'s move to be played', async () => (await state(first.request, id)).moves[0] === square, { timeout: 15_000, every: 50 });

    // A signed-out browser watching the game: never "Your move".
    await myTurn(first.request, id);
    await watcher.goto(`/play/${id}`);
    const seen = (await watcher.locator('#play-status').innerText()).trim();
    assert.doesNotMatch(seen, /Your move/, seen);
    assert.match(seen, new RegExp(`${user}'s move \\(X\\)\\.`), seen);
    // The same without JavaScript: the page as the server renders it.
    const plain = await (await newBrowser({ javaScript: false })).newPage();
    await plain.goto(`/play/${id}`);
    const said = (await plain.locator('#play-status').innerText()).trim();
    assert.match(said, new RegExp(`^tictactoe-random played (?:centre|(?:top|middle|bottom) (?:left|middle|right))\\. ${user}'s move \\(X\\)\\.`), said);
    assert.equal(await plain.locator('#play-board button').count(), 0);
    assert.equal(await watcher.locator('#play-board button').count(), 0, 'no squares and no Resign for a watcher');
    assert.equal((await state(watcher.request, id)).mine, false);
    // Nor can the watcher move by posting the form.
    const refused = await watcher.request.post(`/play/${id}`, { form: { revision: '2', square: '2-2' }, maxRedirects: 0 });
    assert.equal(refused.status(), 403);

    // The second browser resigns: the game is over for both.
    await second.goto(`/play/${id}`);
    await second.getByRole('button', { name: 'Resign' }).click();
    await until('the game to end', async () => (await state(first.request, id)).status === 'finished', { timeout: 15_000, every: 100 });
    await first.goto(`/play/${id}`);
    assert.match((await first.locator('#play-status').innerText()).trim(), /^tictactoe-random won \(resigned\)\.$/);
    await second.goto('/games');
    assert.equal(await second.locator('#running-games a').count(), 0);
    assert.equal(await second.locator(`#ended-games a[href="/play/${id}"]`).count(), 1, 'the game is listed as played');
  } finally {
    await cleanUp(first, id);
  }
});

test('a guest\'s game joins the account they sign up with in that browser', async () => {
  const page = await (await newBrowser()).newPage();
  const id = await start(page, 'tictactoe-random', { name: 'Later' });
  try {
    await myTurn(page.request, id);
    await signUp(page, `${user}b`);
    await page.goto('/games');
    assert.equal(await page.locator('#running-games a').count(), 0, 'not claimed before its page is opened signed in');
    await page.goto(`/play/${id}`);
    await page.goto('/games');
    assert.equal(await page.locator(`#running-games a[href="/play/${id}"]`).count(), 1, 'claimed once opened signed in');
    // Now the account may act from another browser.
    const other = await (await newBrowser()).newPage();
    await signIn(other, `${user}b`);
    await other.goto(`/play/${id}`);
    await other.getByRole('button', { name: 'Resign' }).click();
    await until('the game to end', async () => (await state(page.request, id)).status === 'finished', { timeout: 15_000, every: 100 });
  } finally {
    await cleanUp(page, id);
  }
});

test('the per-client limit counts a signed-in account apart from its address', async () => {
  const guest = await (await newBrowser()).newPage();
  const member = await (await newBrowser()).newPage();
  await signIn(member, user);
  const ids = [];
  try {
    // The address's two places, taken by guests.
    ids.push([guest, await start(guest, 'tictactoe-random', { name: 'One' })]);
    ids.push([guest, await start(guest, 'tictactoe-random', { name: 'Two' })]);
    const third = await guest.request.post('/bots/tictactoe-random/play', { form: { game: 'tictactoe:standard', name: 'Three' }, maxRedirects: 0 });
    assert.equal(third.status(), 429, 'the address holds its limit');
    // The account, from the same address, is a client of its own.
    ids.push([member, await start(member, 'tictactoe-random')]);
    ids.push([member, await start(member, 'tictactoe-random')]);
    await member.goto('/bots/tictactoe-random/play');
    const csrf = await member.locator('input[name="csrf"]').first().getAttribute('value').catch(() => null);
    const over = await member.request.post('/bots/tictactoe-random/play', { form: { game: 'tictactoe:standard', ...(csrf ? { csrf } : {}) }, maxRedirects: 0 });
    assert.equal(over.status(), 429, 'and holds its own limit');
  } finally {
    for (const [page, id] of ids) await cleanUp(page, id);
  }
});

test('the replay viewer draws finished people games of both board games', async () => {
  const page = await (await newBrowser()).newPage();
  let id;
  try {
    id = await start(page, 'othello-random', { name: 'Viewer' });
    assert.equal((await state(page.request, id)).variant, 'othello:std', 'standard Othello by default');
    const end = await playOut(page, id);
    finished.othello = id;
    await page.goto(`/play/${id}`);
    const viewer = page.locator('#replay[data-ready="true"]');
    await viewer.waitFor({ timeout: 15_000 });
    assert.equal(await viewer.getAttribute('data-verified'), 'ok');
    // The real 8×8 board, at its last position: the discs the game ended with.
    await page.locator('#replay .ctl-end').click();
    const leg = page.locator('#replay .leg').first();
    const discs = [Number(await leg.getAttribute('data-black')), Number(await leg.getAttribute('data-white'))];
    assert.deepEqual(discs, end.person_first ? end.counts : [end.counts[1], end.counts[0]], 'the viewer ends on the game\'s discs');
    assert.ok(discs[0] + discs[1] > 4, `discs were played (${discs})`);
    const labels = await page.locator('#replay svg.othello-board text.coord').allTextContents();
    assert.ok(labels.includes('h') && labels.includes('8'), `an 8×8 board's coordinates (${labels.join(' ')})`);
    assert.match(await page.locator('#replay .position').innerText(), /^(\d+) \/ \1$/);
    const [moves, shown] = [end.moves.length, Number(/\/ (\d+)$/.exec(await page.locator('#replay .position').innerText())[1])];
    assert.equal(shown, moves, 'one step per move');
    await screenshot(page, 'people-othello-replay');

    id = await start(page, 'tictactoe-random', { name: 'Viewer' });
    const ttt = await playOut(page, id);
    finished.tictactoe = id;
    await page.goto(`/play/${id}`);
    await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('#replay').getAttribute('data-verified'), 'ok');
    await page.locator('#replay .ctl-end').click();
    const board = await page.locator('#replay .leg').first().getAttribute('data-board');
    const expected = ttt.rows.flat().map((s) => s.mark || '.').join('');
    assert.equal(board, expected, 'the viewer ends on the game\'s grid');
    assert.equal(await page.locator('#replay svg.ttt-board').count(), 1);
    await screenshot(page, 'people-tictactoe-replay');
  } finally {
    await cleanUp(page, id);
  }
});

test('a tic-tac-toe match page has the same viewer', async () => {
  const page = await (await newBrowser()).newPage();
  const match = await until('a finished tic-tac-toe match', async () => {
    const { matches } = await (await page.request.get('/api/matches?ladder=tictactoe:standard&status=finished&limit=1')).json();
    return matches[0];
  }, { timeout: 180_000, every: 1000 });
  await page.goto(`/matches/${match.id}`);
  await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 15_000 });
  assert.equal(await page.locator('#replay').getAttribute('data-verified'), 'ok');
  assert.equal(await page.locator('#replay svg.ttt-board').count(), 2, 'both games drawn');
  await page.locator('#replay').focus();
  await page.keyboard.press('End');
  const boards = await page.locator('#replay .leg').evaluateAll((legs) => legs.map((l) => l.dataset.board));
  assert.ok(boards.every((b) => /[XO]/.test(b)), `marks at the end (${boards})`);
});

// The geometry of the page's board and side panel.
async function layout(page) {
  return page.evaluate(() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
    const squares = [...document.querySelectorAll('#play-board td.sq')].map(box);
    return {
      board: box(document.querySelector('#play-board table')),
      side: box(document.querySelector('.play-side')),
      status: box(document.querySelector('#play-status')),
      square: { w: Math.min(...squares.map((s) => s.w)), h: Math.min(...squares.map((s) => s.h)) },
      labels: box(document.querySelector('#play-board tbody th')),
      scroll: document.documentElement.scrollWidth,
    };
  });
}

// WCAG relative luminance of a CSS colour `rgb(a)(…)`, over `under`.
function luminance([r, g, b]) {
  const c = [r, g, b].map((v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
function rgb(css, under = [255, 255, 255]) {
  const [r, g, b, a = 1] = css.match(/[\d.]+/g).map(Number);
  return [r, g, b].map((v, i) => v * a + under[i] * (1 - a));
}

test('the play page: board first, big squares, standard Othello by default, dots at 3:1 (screenshots at 1280 and 375 px)', async (t) => {
  const context = await newBrowser();
  const page = await context.newPage();
  let id;
  try {
    await page.goto('/bots/othello-greedy/play');
    assert.equal(await page.locator('#play-game').inputValue(), 'othello:std', 'standard Othello is the default');
    // Radio buttons at their own size, each beside its label.
    const radios = await page.locator('#play-form .choice').evaluateAll((labels) => labels.map((l) => {
      const input = l.querySelector('input').getBoundingClientRect();
      const label = l.getBoundingClientRect();
      return { w: input.width, h: input.height, inline: input.top >= label.top - 1 && input.bottom <= label.bottom + 1 && l.innerText.trim().length > 0, text: label.right - input.right };
    }));
    for (const r of radios) {
      assert.ok(r.w <= 24 && r.h <= 24, `a radio button is ${r.w}×${r.h} px`);
      assert.ok(r.inline && r.text > 20, 'a radio button sits on its label\'s line, the text beside it');
    }
    await screenshot(page, 'play-new-1280');
    id = await start(page, 'othello-greedy', { name: 'Layout' });
    await myTurn(page.request, id);
    await page.goto(`/play/${id}`);
    await page.locator('#play-board button.legal').first().waitFor();

    // 1280 px: the board on the left, the status and controls beside it.
    const wide = await layout(page);
    await screenshot(page, 'play-1280', { fullPage: false });
    t.diagnostic(`1280 px: board x ${Math.round(wide.board.x)}–${Math.round(wide.board.x + wide.board.w)}, squares ${wide.square.w.toFixed(1)} px, side x ${Math.round(wide.side.x)}`);
    assert.ok(wide.board.x < 400 && wide.board.x + wide.board.w < 900, `the board is in the left part (x ${wide.board.x}–${wide.board.x + wide.board.w})`);
    assert.ok(wide.side.x >= wide.board.x + wide.board.w, 'the status and controls are beside the board');
    assert.ok(Math.abs(wide.side.y - wide.board.y) < 60, 'beside it, not below');
    assert.ok(wide.square.w >= 48, `squares are ${wide.square.w} px`);
    assert.ok(wide.labels.w <= 24, `the row labels take ${wide.labels.w} px`);

    // Legal-move dots against the felt: at least 3:1 (WCAG 1.4.11).
    const colours = await page.evaluate(() => {
      const dot = document.querySelector('#play-board button.legal .dot');
      return { dot: getComputedStyle(dot).backgroundColor, felt: getComputedStyle(dot.closest('td')).backgroundColor };
    });
    const felt = rgb(colours.felt);
    const [hi, lo] = [luminance(rgb(colours.dot, felt)), luminance(felt)].sort((a, b) => b - a);
    const contrast = (hi + 0.05) / (lo + 0.05);
    t.diagnostic(`legal-move dot ${colours.dot} on ${colours.felt}: ${contrast.toFixed(2)}:1`);
    assert.ok(contrast >= 3, `the legal-move dots contrast ${contrast.toFixed(2)}:1`);

    // 375 px: the board first, full width, squares of 40 px or more.
    await page.setViewportSize({ width: 375, height: 800 });
    const narrow = await layout(page);
    await screenshot(page, 'play-375', { fullPage: false });
    t.diagnostic(`375 px: board x ${Math.round(narrow.board.x)}–${Math.round(narrow.board.x + narrow.board.w)}, squares ${narrow.square.w.toFixed(1)} px, labels ${narrow.labels.w.toFixed(1)} px`);
    assert.ok(narrow.square.w >= 40 && narrow.square.h >= 40, `squares are ${narrow.square.w}×${narrow.square.h} px`);
    assert.ok(narrow.labels.w <= 18, `the row labels take ${narrow.labels.w} px`);
    assert.ok(narrow.side.y >= narrow.board.y + narrow.board.h - 1, 'the status and controls are below the board');
    assert.ok(narrow.scroll <= 376, `no sideways scrolling (${narrow.scroll} px)`);

    // axe-core on the choice page, the game and "My games".
    const member = await (await newBrowser()).newPage();
    await signIn(member, user);
    const found = [];
    for (const width of [1280, 375]) {
      for (const [p, path] of [[page, '/bots/othello-greedy/play'], [page, `/play/${id}`], [member, '/games'], [page, '/games']]) {
        await p.setViewportSize({ width, height: 900 });
        await p.goto(path);
        if (path === '/games' && p === member) await screenshot(p, `games-${width}`);
        for (const v of await axeViolations(p)) found.push(`${width} px ${path}: ${v}`);
      }
      for (const kind of ['othello', 'tictactoe']) {
        if (!finished[kind]) continue;
        await page.goto(`/play/${finished[kind]}`);
        await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 15_000 });
        for (const v of await axeViolations(page)) found.push(`${width} px finished ${kind}: ${v}`);
      }
    }
    assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
  } finally {
    await cleanUp(page, id);
  }
});

test('without JavaScript "My games" lists the account\'s games and the bots to play', async () => {
  const plain = await newBrowser({ javaScript: false });
  const page = await plain.newPage();
  await signIn(page, user);
  await page.goto('/games');
  assert.match(await page.locator('h1').innerText(), /My games/);
  assert.ok(await page.locator('#ended-games a').count() >= 1);
  assert.ok(await page.locator('#playable-bots a[href="/bots/othello-greedy/play"]').count() === 1);
});

test('the home page links to playing a bot', async () => {
  const page = await (await newBrowser()).newPage();
  await page.goto('/');
  const link = page.getByRole('link', { name: 'Play a bot' });
  assert.equal(await link.count(), 1);
  await link.click();
  await page.waitForURL('**/games**');
  assert.ok(await page.locator('#playable-bots a').count() >= 3);
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(contexts.flatMap((c) => c.errorsFound), []);
});
