// A running match's page shows its boards move by move (the replay viewer
// fed by the event stream), then becomes the normal replay when it ends.
// The match is a tournament game of two thinking house bots, slow enough
// (seconds) to be watched.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

let server;
let browser;
let context;
let page;
let errors;

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 1 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url });
  errors = watchErrors(context);
  page = await context.newPage();
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

// Signs up through the API and returns an API token.
async function apiToken() {
  const name = `watcher_${crypto.randomBytes(3).toString('hex')}`;
  const signup = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, password: 'watching closely' }),
  });
  assert.equal(signup.status, 201);
  const { csrf } = await signup.json();
  const cookie = signup.headers.get('set-cookie').split(';')[0];
  const issued = await fetch(`${server.url}/api/tokens`, {
    method: 'POST',
    headers: { Cookie: cookie, 'X-CSRF-Token': csrf },
  });
  assert.equal(issued.status, 201);
  return (await issued.json()).token;
}

test('a running match shows its boards advancing, then its replay', async () => {
  const token = await apiToken();
  const created = await fetch(`${server.url}/api/tournaments`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'watch me', ladder: 'othello:std', bots: ['othello-ab-strong', 'othello-ab-medium'], matches_per_pair: 1 }),
  });
  assert.equal(created.status, 201);
  const { matches } = await fetch(`${server.url}/api/matches?ladder=othello:std&limit=50`).then((r) => r.json());
  const match = matches.find((m) => m.kind === 'tournament');
  assert.ok(match, 'the tournament match is listed');
  await page.goto(`/matches/${match.id}`);

  const leg = page.locator('#live-board [data-leg="0"]');
  await leg.waitFor();
  // Before any turn: the seeded opening (four discs and eight opening moves).
  const opening = Number(await leg.getAttribute('data-frame'));
  assert.ok(opening >= 8, `the opening is drawn (frame ${opening})`);

  // Turns arrive: the board's position moves on, more than once.
  const seen = new Set();
  await until('the live board to advance three times', async () => {
    const frame = await leg.getAttribute('data-frame').catch(() => null);
    if (frame !== null && Number(frame) > opening) seen.add(Number(frame));
    return seen.size >= 3;
  }, { timeout: 120_000, every: 100 });
  const discs = Number(await leg.getAttribute('data-black')) + Number(await leg.getAttribute('data-white'));
  assert.ok(discs > 12, `discs were placed live (${discs})`);
  await screenshot(page, 'match-live-board');

  // At the end the page turns into the replay, which verifies.
  await page.locator('#replay[data-ready="true"]').waitFor({ timeout: 180_000 });
  assert.equal(await page.locator('#replay').getAttribute('data-verified'), 'ok');
  assert.equal(await page.locator('#live').count(), 0, 'no live section once finished');
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(errors, []);
});
