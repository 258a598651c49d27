// "Open a replay file" (/replays/open), in a real browser against a fresh
// `arbiter serve`: replay files written by `arbiter play --out` (the same
// JSON as a match page's or a people game's "Download replay"), and one
// downloaded from a house bots' match page, are chosen in the file input
// and shown in the match pages' viewer, which ends on each game's recorded
// final board (tic-tac-toe marks, Othello discs) and on the match page's
// own final grids; the file is read in the browser, with no request to the
// server. A file that is not a replay (invalid JSON, another JSON, an
// unknown game or mode, a skirmish replay, no games) gets a message saying
// why. Without JavaScript the page says that opening a file needs it and
// names `arbiter verify FILE`. The guide and finished people games link the page.
// axe-core (WCAG 2.1 A/AA) is clean at 1280 and 375 px, and no page logs a
// JavaScript error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ARBITER, axeViolations, launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

let server;
let browser;
let out;
const contexts = [];
let errors = [];
const replays = {};

// One match of `ladder` between two house bots, written by `arbiter play`:
// the replay file's name and its text.
function play(ladder, a, b, name) {
  const dir = path.join(out, name);
  execFileSync(ARBITER, ['play', ladder, a, b, '--matches', '1', '--seed', '7', '--out', dir, '--jobs', '1'], { stdio: 'ignore' });
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
  assert.ok(file, `arbiter play wrote a replay of ${ladder}`);
  return { file: path.join(dir, file), replay: JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) };
}

before(async () => {
  requireBuilt();
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'arbiter-open-'));
  replays.tictactoe = play('tictactoe:standard', 'builtin:tictactoe-perfect', 'builtin:tictactoe-random', 'ttt');
  replays.othello = play('othello:std', 'builtin:othello-greedy', 'builtin:othello-random', 'othello');
  server = await startServer({ workers: 1 });
  browser = await launchBrowser();
});

after(async () => {
  for (const context of contexts) await context.close().catch(() => {});
  await browser?.close();
  await server?.stop();
  if (out) fs.rmSync(out, { recursive: true, force: true });
  assert.deepEqual(errors, [], 'no JavaScript errors');
});

async function newPage({ width = 1280, javaScript = true } = {}) {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width, height: 900 }, javaScriptEnabled: javaScript });
  contexts.push(context);
  errors = errors.concat(watchErrors(context));
  return context.newPage();
}

// Opens /replays/open and chooses `file` (a path, or {name, buffer});
// returns the requests the page made after it had loaded.
async function open(page, file) {
  const response = await page.goto('/replays/open');
  assert.equal(response.status(), 200);
  await page.locator('#replay-open').waitFor({ state: 'visible' });
  const requests = [];
  const watch = (request) => requests.push(`${request.method()} ${request.url()}`);
  page.on('request', watch);
  await page.getByLabel('Replay file (.json)').setInputFiles(file);
  await page.waitForFunction(() => ['shown', 'error'].includes(document.getElementById('replay-open').dataset.state));
  page.off('request', watch);
  return requests;
}

test('a tic-tac-toe replay file is shown ending on its final grids', async () => {
  const page = await newPage();
  const { file, replay } = replays.tictactoe;
  const requests = await open(page, file);
  assert.deepEqual(requests, [], 'the file is read in the browser, not sent anywhere');
  const viewer = page.locator('#replay-file-viewer[data-ready="true"]');
  await viewer.waitFor();
  assert.equal(await viewer.getAttribute('data-verified'), 'ok');
  assert.ok(await page.locator('#replay-open-error').isHidden());
  assert.match(await page.locator('#replay-open-about').innerText(), /tic-tac-toe .*builtin:tictactoe-perfect against builtin:tictactoe-random/);
  await page.getByRole('button', { name: 'Last position' }).click();
  assert.equal(await viewer.getAttribute('data-at-end'), 'true');
  const legs = page.locator('#replay-file-viewer .leg');
  assert.equal(await legs.count(), replay.games.length);
  for (const [i, game] of replay.games.entries()) {
    const keys = ['0-0', '0-1', '0-2', '1-0', '1-1', '1-2', '2-0', '2-1', '2-2'];
    const expected = keys.map((k) => game.record.final_board[k] || '.').join('');
    assert.match(expected, /[XO]/);
    assert.equal(await legs.nth(i).getAttribute('data-board'), expected, `game ${i + 1} ends on its recorded grid`);
  }
  assert.equal(await page.locator('#replay-file-viewer svg.ttt-board').count(), replay.games.length);
  await screenshot(page, 'replay-open-tictactoe');
});

test('an Othello replay file is shown ending on its final discs', async () => {
  const page = await newPage();
  const { file, replay } = replays.othello;
  const requests = await open(page, file);
  assert.deepEqual(requests, []);
  const viewer = page.locator('#replay-file-viewer[data-ready="true"]');
  await viewer.waitFor();
  assert.equal(await viewer.getAttribute('data-verified'), 'ok');
  await page.getByRole('button', { name: 'Last position' }).click();
  for (const [i, game] of replay.games.entries()) {
    const leg = page.locator(`#replay-file-viewer .leg[data-leg="${i}"]`);
    const shown = [Number(await leg.getAttribute('data-black')), Number(await leg.getAttribute('data-white'))];
    assert.deepEqual(shown, game.record.discs, `game ${i + 1}: the viewer's final discs equal record.discs`);
    assert.ok(shown[0] + shown[1] > 4);
  }
  const labels = await page.locator('#replay-file-viewer svg.othello-board text.coord').allTextContents();
  assert.ok(labels.includes('h') && labels.includes('8'), 'an 8×8 board');
  await screenshot(page, 'replay-open-othello');

  // Another file replaces it: the tic-tac-toe one.
  await page.getByLabel('Replay file (.json)').setInputFiles(replays.tictactoe.file);
  await page.locator('#replay-file-viewer svg.ttt-board').first().waitFor();
  assert.equal(await page.locator('#replay-file-viewer svg.othello-board').count(), 0);
});

test('a replay downloaded from a match page ends where the match page\'s viewer does', async () => {
  const page = await newPage();
  const match = await until('a finished tic-tac-toe match of the house bots', async () => {
    const { matches } = await (await page.request.get('/api/matches?ladder=tictactoe:standard&status=finished&limit=1')).json();
    return matches[0];
  }, { timeout: 180_000, every: 1000 });
  await page.goto(`/matches/${match.id}`);
  // (The match page shows this replay already; the guide and finished
  // people games link the page, and a match page stays within its 30 tab
  // stops.)
  await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 15_000 });
  await page.locator('#replay').focus();
  await page.keyboard.press('End');
  const onMatchPage = await page.locator('#replay .leg').evaluateAll((legs) => legs.map((l) => l.dataset.board));
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-json').click()]);
  const file = path.join(out, `match-${match.id}.json`);
  await download.saveAs(file);
  await open(page, file);
  await page.locator('#replay-file-viewer[data-ready="true"]').waitFor();
  await page.getByRole('button', { name: 'Last position' }).click();
  const opened = await page.locator('#replay-file-viewer .leg').evaluateAll((legs) => legs.map((l) => l.dataset.board));
  assert.equal(opened.length, 2);
  assert.ok(opened.every((b) => /[XO]/.test(b)), `marks at the end (${opened})`);
  assert.deepEqual(opened, onMatchPage, 'the same final grids as the match page');
});

test('a file that is not a replay gets a message saying why', async () => {
  const page = await newPage();
  const json = (value) => Buffer.from(JSON.stringify(value));
  const { replay } = replays.tictactoe;
  const cases = [
    [{ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "arbiter-replay",') }, /broken\.json is not a replay: it is not valid JSON/],
    [{ name: 'other.json', mimeType: 'application/json', buffer: json({ hello: 'world' }) }, /not an Arbiter replay/],
    [{ name: 'chess.json', mimeType: 'application/json', buffer: json({ ...replay, game: 'chess' }) }, /game this viewer does not know \("chess"\)/],
    [{ name: 'mode.json', mimeType: 'application/json', buffer: json({ ...replays.othello.replay, mode: 'hexagonal' }) }, /mode this server does not know \("hexagonal"\)/],
    [{ name: 'skirmish.json', mimeType: 'application/json', buffer: json({ ...replay, game: 'skirmish' }) }, /skirmish replay.*arbiter verify FILE/],
    [{ name: 'nogames.json', mimeType: 'application/json', buffer: json({ ...replay, games: [] }) }, /has no games/],
  ];
  for (const [file, message] of cases) {
    await open(page, file);
    const error = page.locator('#replay-open-error');
    assert.ok(await error.isVisible(), `${file.name}: an error is shown`);
    assert.equal(await error.getAttribute('role'), 'alert');
    assert.match(await error.innerText(), message);
    assert.ok(await page.locator('#replay-open-shown').isHidden(), `${file.name}: no viewer`);
  }
  // A replay after an error: the error goes, the viewer comes.
  await page.getByLabel('Replay file (.json)').setInputFiles(replays.tictactoe.file);
  await page.locator('#replay-file-viewer[data-ready="true"]').waitFor();
  assert.ok(await page.locator('#replay-open-error').isHidden());
});

test('without JavaScript the page says what to do instead', async () => {
  const page = await newPage({ javaScript: false });
  await page.goto('/replays/open');
  assert.ok(await page.locator('#replay-open').isHidden(), 'no file input that could do nothing');
  const text = await page.locator('#replay-open-nojs').innerText();
  assert.match(text, /needs JavaScript/);
  assert.match(text, /arbiter verify FILE/);
  await page.goto('/guide');
  assert.equal(await page.locator('#open-replay a[href="/replays/open"]').count(), 1, 'the guide links the page');
});

test('the page is axe-clean at 1280 and 375 px, with a replay and with an error', async () => {
  const found = [];
  for (const width of [1280, 375]) {
    const page = await newPage({ width });
    await page.goto('/replays/open');
    for (const v of await axeViolations(page)) found.push(`${width} px empty: ${v}`);
    await open(page, replays.othello.file);
    await page.locator('#replay-file-viewer[data-ready="true"]').waitFor();
    for (const v of await axeViolations(page)) found.push(`${width} px replay: ${v}`);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    assert.equal(wide, false, `${width} px: no sideways scrolling`);
    await open(page, { name: 'x.json', mimeType: 'application/json', buffer: Buffer.from('nope') });
    for (const v of await axeViolations(page)) found.push(`${width} px error: ${v}`);
    if (width === 375) await screenshot(page, 'replay-open-375');
  }
  assert.deepEqual(found, []);
});
