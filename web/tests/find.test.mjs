// Finding things (issue 42, items 3 and 4), in a real browser against a
// fresh `arbiter serve` whose house bots play on every ladder:
//
// - the match list (/matches) filtered through its GET form and paged with
//   its "Older" and "Newer" links, with JavaScript on and off: each page
//   25 matches, no match twice, "Newer" back to the same page;
// - a user page (their bots with the ladders' headline rating, their bots'
//   matches) and the owner links that lead to it;
// - a bot page paging through its matches, and its logs page linked for
//   its owner only (403 for anyone else);
// - the home page's live list following the event stream: a match shown
//   running leaves it (or shows its result) within seconds of its end,
//   with no reload; without JavaScript the list is the server's, with the
//   time it was read;
// - axe-core finds no WCAG 2.1 A/AA violation on every new or changed
//   page at 1280 and 375 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { HOUSE_WASM, axeViolations, launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

const user = `finder_${crypto.randomBytes(3).toString('hex')}`;
const stranger = `stranger_${crypto.randomBytes(3).toString('hex')}`;
const botName = `seeker_${crypto.randomBytes(3).toString('hex')}`;
const password = 'looking for matches';

let server;
let browser;
let withJs;
let withoutJs;
let errors;
let cookie;

// Signs `name` up through the API: the session cookie (`name=value`).
async function signUp(name) {
  const response = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, password }),
  });
  assert.equal(response.status, 201);
  return { cookie: response.headers.get('set-cookie').split(';')[0], csrf: (await response.json()).csrf };
}

async function signIn(context, pair) {
  const [name, ...value] = pair.split('=');
  await context.addCookies([{ name, value: value.join('='), url: server.url }]);
}

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 2 });
  browser = await launchBrowser();
  withJs = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
  withoutJs = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  errors = watchErrors(withJs);
  const me = await signUp(user);
  cookie = me.cookie;
  await signIn(withJs, cookie);
  // A bot of this user's: a house module under a new name, on tic-tac-toe
  // (its matches take milliseconds).
  const form = new FormData();
  form.append('name', botName);
  form.append('ladders', 'tictactoe:standard');
  form.append('module', new Blob([fs.readFileSync(path.join(HOUSE_WASM, 'tictactoe-perfect.wasm'))]), 'bot.wasm');
  const uploaded = await fetch(`${server.url}/api/bots`, { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': me.csrf }, body: form });
  assert.equal(uploaded.status, 202, await uploaded.text());
  await until('the uploaded bot to be active', async () => {
    const { bots } = await api('/api/bots');
    return Number.isInteger(bots.find((b) => b.name === botName)?.active_version);
  }, { timeout: 180_000, every: 500 });
  // Two tournaments of fast tic-tac-toe matches, so that the lists have
  // more than one page soon: 60 matches, 40 of them tictactoe-random's.
  for (const name of ['pages one', 'pages two']) {
    const created = await fetch(`${server.url}/api/tournaments`, {
      method: 'POST',
      headers: { Cookie: cookie, 'X-CSRF-Token': me.csrf, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, ladder: 'tictactoe:standard', bots: ['tictactoe-perfect', 'tictactoe-random', botName], matches_per_pair: 10 }),
    });
    assert.equal(created.status, 201, await created.text());
  }
});

after(async () => {
  await withJs?.close();
  await withoutJs?.close();
  await browser?.close();
  await server?.stop();
});

async function api(pathname) {
  const response = await fetch(server.url + pathname);
  assert.equal(response.status, 200, `${pathname} answered ${response.status}`);
  return response.json();
}

// The match ids of the list on the page, in order.
async function listed(page) {
  return page.locator('#match-list table.matches tbody tr td:first-child a').evaluateAll((links) =>
    links.map((a) => Number(a.getAttribute('href').split('/').pop())));
}

const today = new Date().toISOString().slice(0, 10);

// Filters the match list through its form, then pages older and back.
async function filterAndPage(page, label) {
  await until('more than a page of decisive matches today', async () => {
    const { matches } = await api(`/api/matches?result=decisive&from=${today}&to=${today}&limit=30`);
    return matches.length >= 30;
  }, { timeout: 300_000, every: 1000 });
  await page.goto('/');
  await page.getByRole('link', { name: 'Matches', exact: true }).click();
  await page.waitForURL('**/matches');
  await page.getByLabel('From (UTC day)').fill(today);
  await page.getByLabel('To (UTC day, included)').fill(today);
  await page.getByLabel('Result').selectOption('decisive');
  await page.getByRole('button', { name: 'Show matches' }).click();
  await page.waitForURL(/\/matches\?.*result=decisive/);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('from'), today, `${label}: the form's day is in the address`);
  const first = await listed(page);
  assert.equal(first.length, 25, `${label}: a full first page`);
  assert.equal(await page.getByLabel('Result').inputValue(), 'decisive', `${label}: the form keeps its filter`);
  // Every row is decisive: "NAME wins".
  const results = await page.locator('#match-list tbody tr td:nth-child(5)').allInnerTexts();
  assert.ok(results.every((r) => / wins$/.test(r.trim())), `${label}: only decisive matches (${results})`);
  assert.equal(await page.locator('.pager [rel="prev"]').count(), 0, `${label}: no newer page at first`);
  await screenshot(page, `matches-filtered-${label}`);

  await page.locator('.pager [rel="next"]').click();
  await page.waitForURL(/after=o/);
  const second = await listed(page);
  assert.ok(second.length > 0, `${label}: an older page`);
  assert.ok(Math.max(...second) < Math.min(...first), `${label}: older matches only, none twice`);
  assert.equal(new URL(page.url()).searchParams.get('result'), 'decisive', `${label}: paging keeps the filters`);

  await page.locator('.pager [rel="prev"]').click();
  await page.waitForURL(/after=n/);
  assert.deepEqual(await listed(page), first, `${label}: "Newer" leads back to the same page`);

  // A filter that cannot be used: the form again, filled in, with why.
  await page.getByLabel('User (their bots)').fill('nobody_at_all');
  await page.getByRole('button', { name: 'Show matches' }).click();
  await page.locator('#filters-error').waitFor();
  assert.match(await page.locator('#filters-error').innerText(), /user "nobody_at_all" not found/);
  assert.equal(await page.getByLabel('From (UTC day)').inputValue(), today);
  assert.equal(await page.getByLabel('Result').inputValue(), 'decisive');
}

test('the match list filters and pages with JavaScript on', async () => {
  const page = await withJs.newPage();
  await filterAndPage(page, 'js');
  await page.close();
});

test('the match list filters and pages with JavaScript off', async () => {
  const page = await withoutJs.newPage();
  await filterAndPage(page, 'nojs');
  await page.close();
});

test('user pages list bots with their ratings, and owners link to them', async () => {
  const page = await withoutJs.newPage();
  await page.goto('/ladders/othello:std');
  await page.locator('#leaderboard .col-owner a').first().click();
  await page.waitForURL('**/users/house');
  assert.match(await page.locator('#user-name').innerText(), /^house/);
  const board = page.locator('table.user-board[data-ladder="othello:std"]');
  await board.waitFor();
  // The same headline and order as the ladder's own page.
  const mine = await board.locator('.col-bot a').allInnerTexts();
  const fitted = await board.locator('strong.fitted').evaluateAll((s) => s.map((e) => e.textContent.trim()));
  await page.goto('/ladders/othello:std');
  const ladderBots = await page.locator('#leaderboard .col-bot a').allInnerTexts();
  const ladderFitted = await page.locator('#leaderboard strong.fitted').evaluateAll((s) => s.map((e) => e.textContent.trim()));
  assert.deepEqual(mine, ladderBots, 'the house bots in the ladder\'s order');
  assert.deepEqual(fitted, ladderFitted, 'with the ladder\'s headline rating');
  await page.goto('/users/house');
  assert.ok((await page.locator('#matches table.matches tbody tr').count()) > 0, 'their bots\' matches');
  assert.equal((await page.goto('/users/nobody_at_all')).status(), 404);
  await page.close();
});

test('a bot page pages through its matches and links its logs for its owner', async () => {
  await until('a match of the uploaded bot', async () => {
    const { matches } = await api(`/api/matches?bot=${botName}&status=finished&limit=1`);
    return matches.length > 0;
  }, { timeout: 240_000, every: 2000 });
  const page = await withJs.newPage();
  await page.goto(`/bots/${botName}`);
  assert.equal(await page.locator('#bot-owner').innerText(), user);
  await page.locator('#bot-logs-link').click();
  await page.waitForURL(`**/bots/${botName}/logs`);
  assert.ok((await page.locator('section.match-logs').count()) > 0, 'its matches with their logs');
  await screenshot(page, 'bot-logs');
  // Anyone else is refused.
  const other = await signUp(stranger);
  const refused = await fetch(`${server.url}/bots/${botName}/logs`, { headers: { Cookie: other.cookie } });
  assert.equal(refused.status, 403);

  // A house bot with many matches: page to the older ones.
  await until('a second page of tictactoe-random\'s matches', async () => {
    const { matches } = await api('/api/matches?bot=tictactoe-random&limit=30');
    return matches.length >= 30;
  }, { timeout: 300_000, every: 1000 });
  await page.goto('/bots/tictactoe-random');
  const first = await page.locator('#matches tbody tr td:first-child a').allInnerTexts();
  assert.equal(first.length, 25);
  await page.locator('#matches .pager [rel="next"]').click();
  await page.waitForURL(/\/bots\/tictactoe-random\?after=o/);
  const second = await page.locator('#matches tbody tr td:first-child a').allInnerTexts();
  assert.ok(second.length > 0 && second.every((id) => !first.includes(id)), 'older matches, none twice');
  assert.equal(await page.locator('#bot-logs-link').count(), 0, 'no logs link on someone else\'s bot');
  await page.close();
});

test('the home page\'s live matches follow the event stream', async () => {
  const page = await withJs.newPage();
  await page.goto('/');
  const box = page.locator('#live-rows');
  await page.locator('#live-rows[data-following="true"]').waitFor({ timeout: 20_000 });
  // A match shown as running on the page.
  const shown = await until('a running match on the home page', async () => {
    const ids = await box.locator('tr.row-running td:first-child a').evaluateAll((links) =>
      links.map((a) => Number(a.getAttribute('href').split('/').pop())));
    return ids[0];
  }, { timeout: 120_000, every: 250 });
  // It ends: within a few seconds the list no longer shows it running,
  // without a reload.
  const ended = await until(`match ${shown} to end`, async () => {
    const { match } = await api(`/api/matches/${shown}`);
    return match.status === 'finished' || match.status === 'failed' ? Date.now() : null;
  }, { timeout: 180_000, every: 200 });
  await until(`the list to drop match ${shown}`, async () =>
    (await box.locator(`tr.row-running a[href="/matches/${shown}"]`).count()) === 0, { timeout: 10_000, every: 100 });
  const lag = Date.now() - ended;
  assert.ok(lag < 10_000, `the list followed within ${lag} ms`);
  assert.ok(Number(await box.getAttribute('data-updates')) >= 1);
  assert.equal(page.url(), `${server.url}/`, 'no reload');
  await page.close();

  // Without JavaScript: the server's list, read when the page was.
  const still = await withoutJs.newPage();
  await still.goto('/');
  assert.match(await still.locator('#live-as-of').innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  const running = await api('/api/matches?status=running&limit=10');
  assert.ok(running.matches.length >= 0);
  await still.close();
});

test('new and changed pages are axe-clean at 1280 and 375 px', async () => {
  const pages = [
    '/',
    '/matches',
    `/matches?from=${today}&result=decisive&reason=fault`,
    '/matches?user=nobody_at_all&result=win',
    '/users/house',
    `/users/${user}`,
    '/bots/othello-greedy',
    `/bots/${botName}`,
    `/bots/${botName}/logs`,
    '/ladders/othello:std',
  ];
  const page = await withJs.newPage();
  const found = [];
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    for (const pathname of pages) {
      await page.goto(pathname);
      const violations = await axeViolations(page);
      if (violations.length) found.push(`${pathname} at ${width}px:\n  ${violations.join('\n  ')}`);
    }
  }
  await page.close();
  assert.deepEqual(found, []);
});

test('no page logged a JavaScript error', () => {
  // The refused filter answers 404 on purpose (a page, not a script error).
  assert.deepEqual(errors.filter((e) => !/status of 404/.test(e)), []);
});
