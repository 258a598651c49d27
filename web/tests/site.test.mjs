// The site, end to end in a real browser: one story against a fresh
// `arbiter serve` (see support.mjs for what must be built first).
//
// Sign up → issue a token → upload a house bot's module through the form and
// watch it pass the check → refused and rejected uploads show why → the bot
// plays → its page → one of its matches: step the replay to the end and
// compare the disc counts with the API → download the replay → the ladder
// refreshes itself → a challenge followed live → a tournament whose name is
// an XSS attempt → the guide → phone-sized pages → sign out. No page may log
// a JavaScript error. Screenshots go to web/screenshots/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import {
  HOUSE_WASM, SCREENSHOTS, editProfile, launchBrowser, requireBuilt, screenshot, silentBotWasm, startServer, until, watchErrors,
} from './support.mjs';

const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>';
const suffix = crypto.randomBytes(3).toString('hex');
const user = `tester_${suffix}`;
const password = 'correct horse battery';
const botName = `greedy_${suffix}`;

let server;
let browser;
let context;
let page;
let errors;
// Console errors of API answers the test provokes on purpose (refused uploads).
let expectHttpErrors = false;

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 2 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  errors = watchErrors(context, (text) => expectHttpErrors && /status of 4\d\d/.test(text));
  page = await context.newPage();
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

async function api(pathname) {
  const response = await fetch(server.url + pathname);
  assert.equal(response.status, 200, `${pathname} answered ${response.status}`);
  return response.json();
}

async function labelled(p) {
  // Every visible form control has an accessible name.
  return p.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((e) => e.type !== 'hidden' && e.offsetParent !== null)
      .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
      .map((e) => e.id || e.name));
}

test('the home page lists the ladders', async () => {
  await page.goto('/');
  await assert.doesNotReject(page.getByRole('heading', { level: 1 }).waitFor());
  const ladders = await page.locator('.cards .card').count();
  assert.equal(ladders, 7, 'seven ladders: tic-tac-toe, five Othello modes and skirmish');
  assert.match(await page.locator('.cards').innerText(), /Othello · octagon/);
  assert.match(await page.locator('.cards').innerText(), /Skirmish/i);
  await screenshot(page, 'home');
});

test('a visitor signs up through the form', async () => {
  await page.goto('/signup');
  assert.deepEqual(await labelled(page), []);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await screenshot(page, 'signup');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/account');
  assert.equal(await page.locator('#account-name').innerText(), user);
  assert.equal(await page.locator('meta[name="csrf-token"]').getAttribute('content').then((t) => t.length), 64);
});

test('the account page issues an API token, shown once', async () => {
  // Nothing to show before a token is issued.
  assert.equal(await page.locator('#token-box').isVisible(), false);
  page.expectConfirm = true;
  await page.getByRole('button', { name: 'Issue a new API token' }).click();
  const output = page.locator('#token-output');
  await output.waitFor({ state: 'visible' });
  const token = await output.inputValue();
  assert.match(token, /^arb_[0-9a-f]{64}$/);
  const me = await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());
  assert.equal(me.user.name, user);
  await screenshot(page, 'account');
});

test('an upload is checked and accepted', async () => {
  await page.goto('/upload');
  assert.deepEqual(await labelled(page), []);
  await page.getByLabel(/^Module/).setInputFiles(path.join(HOUSE_WASM, 'othello-greedy.wasm'));
  await page.getByLabel('Bot name').fill(botName);
  await page.getByLabel(/Othello · standard/).check();
  await page.getByRole('button', { name: 'Upload and check' }).click();
  await page.locator('#verdict[data-state="active"]').waitFor({ timeout: 180_000 });
  assert.match(await page.locator('#verdict-text').innerText(), /Accepted: version 1 of greedy_/);
  await screenshot(page, 'upload-accepted');
});

test('a module that is not WebAssembly is refused with its reason', async () => {
  expectHttpErrors = true;
  try {
    await page.goto('/upload');
    await page.getByLabel(/^Module/).setInputFiles({ name: 'x.wasm', mimeType: 'application/wasm', buffer: crypto.randomBytes(4096) });
    await page.getByLabel('Bot name').fill(`broken_${suffix}`);
    await page.getByLabel(/Othello · standard/).check();
    await page.getByRole('button', { name: 'Upload and check' }).click();
    await page.locator('#verdict[data-state="rejected"]').waitFor();
    assert.match(await page.locator('#reason-text').innerText(), /not WebAssembly/);
    await screenshot(page, 'upload-refused');
  } finally {
    expectHttpErrors = false;
  }
});

test('a module that fails the smoke match is rejected with reason and stderr', async () => {
  await page.goto('/upload');
  await page.getByLabel(/^Module/).setInputFiles({ name: 'silent.wasm', mimeType: 'application/wasm', buffer: silentBotWasm(`${XSS} from stderr\n`) });
  await page.getByLabel('Bot name').fill(`silent_${suffix}`);
  await page.getByLabel(/Othello · standard/).check();
  await page.getByRole('button', { name: 'Upload and check' }).click();
  await page.locator('#verdict[data-state="rejected"]').waitFor({ timeout: 180_000 });
  assert.match(await page.locator('#reason-text').innerText(), /crash|replying/);
  assert.match(await page.locator('#stderr-text').innerText(), /<script>alert\(1\)<\/script>/);
  await screenshot(page, 'upload-rejected');
  // The owner reads the same on the bot page, as text.
  await page.goto(`/bots/silent_${suffix}`);
  assert.match(await page.locator('.versions .reason').innerText(), /crash|replying/);
  await page.locator('.versions summary').click();
  assert.match(await page.locator('.versions pre.log').innerText(), /<script>alert\(1\)<\/script>/);
  assert.equal(await page.locator('.versions pre.log script, .versions pre.log img').count(), 0);
});

let matchId;

test('the bot plays and its page shows versions, matches and head-to-head', async () => {
  const finished = await until('a finished match of the new bot', async () => {
    const { matches } = await api(`/api/matches?bot=${botName}&status=finished&limit=5`);
    return matches.find((m) => m.replay);
  }, { timeout: 240_000, every: 2000 });
  matchId = finished.id;
  await page.goto(`/bots/${botName}`);
  assert.match(await page.locator('.versions tbody tr').first().innerText(), /active/);
  await page.locator(`.matches a[href="/matches/${matchId}"]`).waitFor();
  assert.ok(await page.locator('.h2h tbody tr').count() >= 1);
  assert.match(await page.locator('.h2h').innerText(), /not conclusive/);
  await screenshot(page, 'bot');
});

test('the owner edits the bot\'s profile, and its photo shows on the leaderboard', async () => {
  await editProfile(page, context.request, botName, 'Counts discs. <i>Loves</i> corners.');
  await page.goto('/ladders/othello:std');
  const row = page.locator('tr', { has: page.locator(`a[href="/bots/${botName}"]`) });
  await row.locator('img.thumb').waitFor();
  await screenshot(page, 'profile');
});

test('a match page replays both legs to the recorded final positions', async () => {
  await page.locator(`.matches a[href="/matches/${matchId}"]`).first().click();
  await page.waitForURL(`**/matches/${matchId}`);
  const viewer = page.locator('#replay[data-ready="true"]');
  await viewer.waitFor();
  assert.equal(await viewer.getAttribute('data-verified'), 'ok');
  assert.equal(await page.locator('#replay .leg').count(), 2, 'both legs side by side');
  // The owner sees the stderr section.
  await page.getByRole('heading', { name: "Your bot's stderr" }).waitFor();

  // Step with the buttons and the keyboard.
  const pos = async () => Number(await viewer.getAttribute('data-pos'));
  const start = await pos();
  await page.getByRole('button', { name: 'Next move (→)' }).click();
  assert.equal(await pos(), start + 1);
  await page.keyboard.press('ArrowLeft');
  assert.equal(await pos(), start);
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await until('the replay to advance', async () => (await pos()) > start + 1, { timeout: 10_000, every: 200 });
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.locator('#replay').focus();
  await page.keyboard.press('Home');
  assert.equal(await pos(), 0);
  await page.getByRole('button', { name: 'Last position' }).click();
  assert.equal(await viewer.getAttribute('data-at-end'), 'true');

  const replay = await page.evaluate((id) => fetch(`/api/matches/${id}/replay`).then((r) => r.json()), matchId);
  const { match } = await api(`/api/matches/${matchId}`);
  const totals = [0, 0];
  for (let leg = 0; leg < 2; leg += 1) {
    const panel = page.locator(`#replay .leg[data-leg="${leg}"]`);
    const shown = [Number(await panel.getAttribute('data-black')), Number(await panel.getAttribute('data-white'))];
    const record = replay.games[leg].record;
    assert.deepEqual(shown, record.discs, `leg ${leg}: the viewer's final discs equal the replay's record.discs`);
    assert.deepEqual(shown, replay.games[leg].scores, `leg ${leg}: played out, so its score is its discs`);
    replay.games[leg].sides.forEach((participant, side) => { totals[participant] += shown[side]; });
    assert.match(await panel.locator('.discs').innerText(), new RegExp(`Black ${shown[0]} · .*White ${shown[1]}`));
  }
  assert.deepEqual(totals, match.scores, 'the legs add up to the match score of /api/matches/{id}');
  assert.deepEqual(totals, replay.result.totals);
  await screenshot(page, 'match');

  // Clicking a move in the list jumps to it.
  await page.locator('#replay .leg[data-leg="0"] .movelist button').nth(10).click();
  assert.equal(await pos(), 11);
});

test('the replay downloads as JSON and as a transcript', async () => {
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-json').click()]);
  assert.equal(download.suggestedFilename(), `arbiter-match-${matchId}.json`);
  const saved = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  assert.equal(saved.format, 'arbiter-replay');
  assert.equal(saved.match_id, matchId);
  const href = await page.locator('#download-transcript').getAttribute('href');
  const transcript = await page.evaluate((url) => fetch(url).then((r) => r.text()), href);
  assert.equal(transcript.trim().split('\n').length, 2);
  assert.match(transcript, /^([a-h][1-8]|--)+$/m);
});

test('the leaderboard shows the bot and refreshes without a reload', async () => {
  await page.goto('/ladders/othello:std');
  const row = page.locator('#leaderboard tbody tr', { hasText: botName });
  await row.waitFor();
  assert.match(await row.innerText(), /±/);
  // The headline is the rating fitted to the whole log, with its interval,
  // the API's `fitted`; Glicko-2 (G) beside it. Matches go on meanwhile, so
  // the page and the API may be a match apart: within the interval.
  const headline = row.locator('.fitted');
  assert.match(await headline.innerText(), /^\d+ ± \d+$/);
  const shown = Number(await headline.getAttribute('data-fitted'));
  const { entries } = await api('/api/ladders/othello:std/leaderboard');
  const entry = entries.find((e) => e.bot === botName);
  assert.ok(entry && typeof entry.fitted === 'number' && entry.fitted_interval > 0, JSON.stringify(entry));
  assert.ok(Math.abs(shown - entry.fitted) <= entry.fitted_interval, `page ${shown}, API ${entry.fitted} ± ${entry.fitted_interval}`);
  assert.match(await row.locator('.glicko').innerText(), /^Glicko-2 \d+ ± \d+/);
  await page.locator('#leaderboard[data-refreshes]').waitFor({ timeout: 30_000 });
  await screenshot(page, 'ladder');
});

test('a challenge is followed live until its replay shows', async () => {
  await page.goto('/challenge?opponent=othello-ab-medium&ladder=othello:std');
  assert.deepEqual(await labelled(page), []);
  await page.getByLabel('Your bot').selectOption(botName);
  await screenshot(page, 'challenge');
  await page.getByRole('button', { name: 'Start the match' }).click();
  await page.waitForURL(/\/matches\/\d+$/);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  const { match } = await api(`/api/matches/${id}`);
  assert.equal(match.kind, 'challenge');
  let sawLive = false;
  if (match.status !== 'finished') {
    await page.locator('#live').waitFor();
    await until('live moves or the result', async () => {
      if (await page.locator('#live-moves li').count()) {
        sawLive = true;
        await screenshot(page, 'match-live');
        return true;
      }
      return page.locator('#replay').count();
    }, { timeout: 180_000, every: 250 });
  }
  // The page reloads itself once the match is over.
  await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 180_000 });
  assert.equal(await page.locator('#replay').getAttribute('data-verified'), 'ok');
  assert.ok(sawLive || match.status === 'finished', 'moves of the running match appeared live');
});

test('a tournament named like a script renders as text', async () => {
  await page.goto('/tournaments');
  assert.deepEqual(await labelled(page), []);
  await page.getByLabel('Name', { exact: true }).fill(XSS);
  await page.getByLabel('Ladder', { exact: true }).selectOption('othello:std');
  await page.getByLabel(/^Bots/).fill(`${botName}, othello-random`);
  await page.getByRole('button', { name: /Create/ }).click();
  await page.waitForURL(/\/tournaments\/\d+$/);
  assert.equal(await page.locator('#tournament-name').innerText(), XSS);
  assert.equal(await page.locator('main script, main img[src="x"]').count(), 0);
  assert.equal(await page.locator('.crosstable tbody tr').count(), 2);
  await screenshot(page, 'tournament');
  await page.goto('/tournaments');
  assert.match(await page.locator('main table').innerText(), /<script>alert\(1\)<\/script>/);
});

test('the guide explains the protocol, the SDK, play and check', async () => {
  await page.goto('/guide');
  const text = await page.locator('main').innerText();
  for (const needle of ['arbiter_sdk::othello', 'othello::Bot', 'arbiter play', 'arbiter check', 'legal_moves',
    'arbiter new c my-bot', 'arbiter new zig my-bot', 'arbiter new assemblyscript my-bot', 'arbiter new go my-bot', 'stack-first']) {
    assert.ok(text.includes(needle), `the guide mentions ${needle}`);
  }
  // The upload page leads to the kits.
  await screenshot(page, 'guide');
  await page.goto('/upload');
  await page.locator('a[href="/guide#kits"]').click();
  await page.locator('#kits').waitFor();
  assert.match(page.url(), /\/guide#kits$/);
});

test('pages fit a phone screen', async () => {
  const phone = await browser.newContext({ baseURL: server.url, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const phoneErrors = watchErrors(phone);
  const p = await phone.newPage();
  for (const [name, url] of [['home', '/'], ['ladder', '/ladders/othello:std'], ['match', `/matches/${matchId}`], ['bot', `/bots/${botName}`]]) {
    await p.goto(url);
    if (name === 'match') {
      await p.locator('#replay[data-ready="true"]').waitFor();
      fs.mkdirSync(SCREENSHOTS, { recursive: true });
      await p.locator('#replay').screenshot({ path: path.join(SCREENSHOTS, 'phone-replay.png') });
    }
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `${url} scrolls sideways by ${overflow}px on a phone`);
    await screenshot(p, `phone-${name}`, { fullPage: false });
  }
  await phone.close();
  assert.deepEqual(phoneErrors, []);
});

test('signing out ends the session', async () => {
  await page.goto(`/matches/${matchId}`);
  await page.getByRole('button', { name: 'Sign out' }).first().click();
  await page.waitForURL(`${server.url}/`);
  await page.getByRole('link', { name: 'Sign in' }).waitFor();
  expectHttpErrors = true;
  const me = await page.evaluate(() => fetch('/api/me').then((r) => r.status));
  expectHttpErrors = false;
  assert.equal(me, 401);
  await page.goto(`/matches/${matchId}`);
  assert.equal(await page.getByRole('heading', { name: "Your bot's stderr" }).count(), 0, 'logs are for owners only');
  await page.goto('/upload');
  assert.match(page.url(), /\/signin\?next=%2Fupload$|\/signin\?next=\/upload$/);
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(errors, []);
});
