// Accessibility in a real browser, against a fresh `arbiter serve` whose
// house bots fill every ladder: axe-core (WCAG 2.1 A and AA rules) finds no
// violation on any page a visitor or a signed-in user sees, at 1280 and at
// 375 px; the Othello match page is at most 30 tab stops (each move list is
// one); every tab stop of a match page has a name and a visible focus ring;
// at 375 px the leaderboard and the match lists show their key columns
// without sideways scrolling; and the live status is not rewritten at every
// turn.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { axeViolations, launchBrowser, requireBuilt, startServer, tabStops, until, watchErrors } from './support.mjs';

// The pages axe-core checks; `{...}` parts are filled in once the server has
// matches of each kind. Signed-in pages are checked signed in.
const PAGES = [
  '/',
  '{every ladder}',
  '/bots/othello-greedy',
  '/matches/{finished othello:std}',
  '/matches/{running othello:std}',
  '/matches/{finished tictactoe}',
  '/matches/{finished skirmish:standard}',
  '/guide',
  '/api/reference',
  '/signup',
  '/signin',
  '/upload',
  '/account',
  '/tournaments',
];
const WIDTHS = [1280, 375];

const user = `axe_${crypto.randomBytes(3).toString('hex')}`;
const password = 'seen by every reader';

let server;
let browser;
let context;
let errors;

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 2 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
  errors = watchErrors(context);
  // Sign in this browser through the API: its session cookie serves the pages.
  const signup = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: user, password }),
  });
  assert.equal(signup.status, 201);
  const [pair] = signup.headers.get('set-cookie').split(';');
  const [name, ...value] = pair.split('=');
  await context.addCookies([{ name, value: value.join('='), url: server.url }]);
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

async function match(ladder, status) {
  return until(`a ${status} ${ladder} match`, async () => {
    const { matches } = await api(`/api/matches?ladder=${encodeURIComponent(ladder)}&status=${status}&limit=1`);
    return matches[0]?.id;
  }, { timeout: 300_000, every: status === 'running' ? 200 : 2000 });
}

// The paths of PAGES with their placeholders filled in.
async function paths(page) {
  const out = [];
  for (const entry of PAGES) {
    if (entry === '{every ladder}') {
      await visit(page, '/');
      const ladders = await page.locator('.cards h3 a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
      assert.ok(ladders.length >= 7, `the home page lists the ladders (${ladders})`);
      out.push(...ladders);
      continue;
    }
    const m = /\{(finished|running) ([^}]+)\}/.exec(entry);
    if (!m || m[1] === 'running') out.push(entry);
    else out.push(entry.replace(m[0], String(await match(m[2], m[1]))));
  }
  return out;
}

// Navigates to `path`. A live match page reloads itself when its match
// ends; if that reload races with this navigation, Chromium aborts one of
// them (net::ERR_ABORTED): the navigation is then tried again.
async function visit(page, path) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await page.goto(path);
    } catch (error) {
      const raced = /ERR_ABORTED|interrupted by another navigation/.test(error.message);
      if (!raced || attempt >= 3) throw error;
    }
  }
}

// Opens `path` and waits for what its scripts draw (the replay viewers).
async function open(page, path) {
  const response = await visit(page, path);
  assert.equal(response.status(), 200, `${path} answered ${response.status()}`);
  const drawn = async (selector) => {
    try {
      await page.locator(selector).waitFor({ state: 'attached', timeout: 60_000 });
    } catch (error) {
      throw new Error(`${path}: ${selector} did not appear: ${error.message}`);
    }
  };
  if (await page.locator('#replay.replay').count()) await drawn('#replay.replay[data-ready]');
  if (await page.locator('#skirmish.replay').count()) await drawn('#skirmish.replay[data-verified]');
}

test('axe-core finds no WCAG 2.1 A or AA violation on any page, at 1280 and 375 px', async () => {
  const page = await context.newPage();
  const found = [];
  const all = await paths(page);
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const path of all) {
      if (path.includes('{running')) {
        // A running match may end while it is checked: then try the next.
        let checked = false;
        for (let attempt = 0; attempt < 8 && !checked; attempt++) {
          const id = await match('othello:std', 'running');
          await visit(page, `/matches/${id}`);
          if (!(await page.locator('#live').count())) continue;
          await page.locator('#live-board[data-ready]').waitFor({ timeout: 10_000 }).catch(() => {});
          const violations = await axeViolations(page).catch(() => null);
          if (violations === null || !(await page.locator('#live').count())) continue;
          checked = true;
          for (const v of violations) found.push(`${width} px /matches/${id} (running): ${v}`);
        }
        assert.ok(checked, 'a running Othello match was checked');
        continue;
      }
      await open(page, path);
      for (const v of await axeViolations(page)) found.push(`${width} px ${path}: ${v}`);
    }
  }
  await page.close();
  assert.deepEqual(found, [], `axe-core violations:\n${found.join('\n')}`);
});

test('the Othello match page has at most 30 tab stops, each named and with a focus ring', async (t) => {
  const page = await context.newPage();
  await open(page, `/matches/${await match('othello:std', 'finished')}`);
  const moves = await page.locator('.movelist .mv').count();
  assert.ok(moves > 40, `the move lists hold every move (${moves})`);
  const stops = await tabStops(page);
  const described = stops.map((s) => `${s.tag}#${s.id}.${s.cls} "${s.name}"`).join('\n');
  t.diagnostic(`${stops.length} tab stops, signed in, ${moves} move buttons`);
  assert.ok(stops.length <= 30, `${stops.length} tab stops:\n${described}`);
  assert.equal(stops.filter((s) => s.cls.includes('mv')).length, 2, `one stop per move list:\n${described}`);
  assert.deepEqual(stops.filter((s) => !s.name), [], 'every tab stop has a name');
  assert.deepEqual(stops.filter((s) => !s.ring), [], 'every tab stop shows a focus ring');

  // Arrow keys move inside a list and show the move reached.
  const list = page.locator('.movelist').first();
  await list.locator('.mv[tabindex="0"]').focus();
  await page.keyboard.press('Home');
  assert.equal(await page.locator('#replay').getAttribute('data-pos'), '1');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.locator('#replay').getAttribute('data-pos'), '3');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.frame), '3', 'focus follows the move');
  assert.equal(await list.locator('.mv[tabindex="0"]').count(), 1, 'still one tab stop');
  await page.close();
});

test('the skirmish match page: every tab stop is named and shows a focus ring', async () => {
  const page = await context.newPage();
  await open(page, `/matches/${await match('skirmish:standard', 'finished')}`);
  const stops = await tabStops(page);
  const described = stops.map((s) => `${s.tag}#${s.id}.${s.cls} "${s.name}"`).join('\n');
  assert.deepEqual(stops.filter((s) => !s.name), [], `every tab stop has a name:\n${described}`);
  assert.deepEqual(stops.filter((s) => !s.ring), [], `every tab stop shows a focus ring:\n${described}`);
  assert.ok(!stops.some((s) => s.id === 'skirmish'), 'the viewer itself is no tab stop');
  await page.close();
});

test('at 375 px the key columns show without sideways scrolling', async () => {
  const page = await context.newPage();
  await page.setViewportSize({ width: 375, height: 800 });
  await visit(page, '/ladders/othello:std');
  await page.locator('#leaderboard tbody tr').first().waitFor();
  const fits = (selector) => page.locator(selector).evaluate((table) => {
    const wrap = table.closest('.table-wrap');
    const visible = [...table.tHead.rows[0].cells].filter((c) => c.offsetParent !== null).map((c) => c.textContent.trim());
    return { visible, table: table.scrollWidth, wrap: wrap.clientWidth, page: document.documentElement.scrollWidth };
  });
  const board = await fits('#leaderboard');
  assert.deepEqual(board.visible.map((h) => h.split(' (')[0]), ['#', 'Bot', 'Rating', 'W/D/L'], `${board.visible}`);
  assert.ok(board.table <= board.wrap, `the leaderboard fits (${board.table} in ${board.wrap} px)`);
  assert.ok(board.page <= 375, `the page does not scroll sideways (${board.page} px)`);
  const recent = await fits('table.matches');
  assert.ok(recent.visible.includes('Score') && recent.visible.includes('Result'), `recent matches: ${recent.visible}`);
  assert.ok(recent.table <= recent.wrap, `recent matches fit (${recent.table} in ${recent.wrap} px)`);
  await page.close();
});

test('the live status is announced at most every few seconds, not at every turn', async () => {
  const page = await context.newPage();
  let watched = null;
  for (let attempt = 0; attempt < 8 && !watched; attempt++) {
    const id = await match('othello:std', 'running');
    await visit(page, `/matches/${id}`);
    if (!(await page.locator('#live').count())) continue;
    // Count every change of #live-status while turns arrive.
    await page.evaluate(() => {
      window.statusChanges = 0;
      new MutationObserver(() => { window.statusChanges += 1; })
        .observe(document.getElementById('live-status'), { childList: true, characterData: true, subtree: true });
    });
    const turns = await until('turns to arrive', async () => {
      const n = Number(await page.locator('#live').getAttribute('data-turns').catch(() => '0'));
      return n >= 12 ? n : null;
    }, { timeout: 20_000, every: 100 }).catch(() => null);
    if (turns === null) continue;
    watched = { turns, changes: await page.evaluate(() => window.statusChanges) };
  }
  assert.ok(watched, 'a running match was watched');
  assert.ok(watched.changes <= 3, `#live-status changed ${watched.changes} times over ${watched.turns} turns`);
  await page.close();
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(errors, []);
});
