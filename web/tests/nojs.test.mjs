// The site with JavaScript turned off, in a real browser: every form posts
// to the site itself (a hidden CSRF field, then a 303), so a visitor whose
// scripts are blocked or failed can sign up, sign out, sign in and upload a
// bot; a refused upload or challenge shows its form again with the message;
// the token page follows POST-redirect-GET; the header knows the user on
// every page, 404s included. The password never appears in a URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { HOUSE_WASM, editProfile, launchBrowser, requireBuilt, screenshot, startServer, until } from './support.mjs';

const suffix = crypto.randomBytes(3).toString('hex');
const user = `nojs_${suffix}`;
const password = 'no scripts needed';
const botName = `plain_${suffix}`;

let server;
let browser;
let context;
let page;
const urls = [];

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 1 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false });
  page = await context.newPage();
  page.on('request', (request) => urls.push(request.url()));
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
});

test('a visitor signs up without JavaScript', async () => {
  await page.goto('/signup');
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/account');
  assert.equal(await page.locator('#account-name').innerText(), user);
});

test('the account page issues a token without JavaScript, shown once (POST-redirect-GET)', async () => {
  const methods = [];
  const record = (request) => { if (request.isNavigationRequest()) methods.push(`${request.method()} ${new URL(request.url()).pathname}`); };
  page.on('request', record);
  await page.getByRole('button', { name: 'Issue a new API token' }).click();
  await page.waitForURL('**/account');
  await page.locator('#token-box').waitFor();
  const token = await page.locator('#token-output').inputValue();
  assert.match(token, /^arb_[0-9a-f]{64}$/);
  assert.deepEqual(methods, ['POST /account/token', 'GET /account'], 'the POST answers with a redirect to the account page');
  const me = (t) => fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${t}` } });
  assert.equal((await me(token).then((r) => r.json())).user.name, user);

  // A reload shows no token and issues none: the one shown still works.
  methods.length = 0;
  await page.reload();
  assert.deepEqual(methods, ['GET /account'], 'the reload is a GET');
  assert.equal(await page.locator('#token-box').isVisible(), false, 'the token is shown once');
  assert.equal(await page.locator('#token-output').inputValue(), '');
  assert.equal((await me(token)).status, 200, 'the token shown is still valid after a reload');
  page.off('request', record);
});

test('signed in, the 404 pages of matches, bots and ladders show the signed-in header', async () => {
  for (const path of ['/matches/999999', '/bots/no-such-bot', '/ladders/no-such-ladder', '/no/such/page']) {
    const response = await page.goto(path);
    assert.equal(response.status(), 404, path);
    assert.equal(await page.locator('header a[data-user]').innerText(), user, `${path} knows who is signed in`);
    assert.equal(await page.locator('header').getByRole('link', { name: 'Sign in' }).count(), 0, path);
  }
});

test('signing out and in again works without JavaScript', async () => {
  await page.goto('/account');
  await page.getByRole('button', { name: 'Sign out' }).first().click();
  await page.waitForURL(`${server.url}/`);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.form-error').waitFor();
  assert.match(await page.locator('.form-error').innerText(), /wrong name or password/);
  assert.equal(await page.getByLabel('User name').inputValue(), user, 'the name is kept');
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/$|\/account$/);
  await page.goto('/account');
  assert.equal(await page.locator('#account-name').innerText(), user);
});

test('an upload without JavaScript lands on the bot page and is checked', async () => {
  await page.goto('/upload');
  // The <noscript> note shows only when scripts are really off.
  assert.match(await page.locator('noscript + *, main').first().innerText(), /reload it to see the verdict/);
  await page.getByLabel(/^Module/).setInputFiles(path.join(HOUSE_WASM, 'othello-greedy.wasm'));
  await page.getByLabel('Bot name').fill(botName);
  await page.getByLabel(/Othello · standard/).check();
  await page.getByRole('button', { name: 'Upload and check' }).click();
  await page.waitForURL(`**/bots/${botName}`);
  await screenshot(page, 'upload-nojs');
  // Without scripts the page does not refresh itself: reload until the
  // check's verdict shows.
  await until('the version to be active', async () => {
    await page.reload();
    return (await page.locator('.status-active').count()) > 0;
  }, { timeout: 180_000, every: 1000 });
});

test('the owner edits the bot\'s profile without JavaScript', async () => {
  await editProfile(page, context.request, botName, 'Greedy, <b>not</b> clever & proud of it');
  await screenshot(page, 'profile-nojs');
});

test('a refused upload without JavaScript shows the form again, filled in, with the message', async () => {
  await page.goto('/upload');
  await page.getByLabel(/^Module/).setInputFiles(path.join(HOUSE_WASM, 'othello-greedy.wasm'));
  await page.getByLabel('Bot name').fill(`${botName}_2`);
  // No ladder ticked (a new bot has none by default).
  assert.equal(await page.locator('input[name="ladders"]:checked').count(), 0);
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/upload')),
    page.getByRole('button', { name: 'Upload and check' }).click(),
  ]);
  assert.equal(response.status(), 400);
  await page.locator('#upload-form').waitFor();
  assert.match(await page.locator('#upload-error').innerText(), /ladder/i);
  assert.equal(await page.getByLabel('Bot name').inputValue(), `${botName}_2`, 'the name is kept');
  await screenshot(page, 'upload-error-nojs');

  // Ticked ladders are kept too: a bad name with a ladder ticked.
  await page.getByLabel(/^Module/).setInputFiles(path.join(HOUSE_WASM, 'othello-greedy.wasm'));
  await page.getByLabel(/Othello · standard/).check();
  await page.getByLabel('Bot name').evaluate((input) => { input.removeAttribute('pattern'); input.value = 'no spaces allowed'; });
  await page.getByRole('button', { name: 'Upload and check' }).click();
  await page.locator('#upload-error').waitFor();
  assert.equal(await page.getByLabel(/Othello · standard/).isChecked(), true, 'the ladder stays ticked');
  assert.equal(await page.getByLabel('Bot name').inputValue(), 'no spaces allowed');
});

test('a remote bot with a loopback URL is refused without JavaScript, the form filled in again', async () => {
  await page.goto('/upload');
  await page.getByRole('link', { name: 'Register a remote bot' }).click();
  await page.waitForURL('**/upload/remote');
  await page.getByLabel(/^URL/).fill('http://127.0.0.1:9/bot');
  await page.getByLabel('Bot name').fill(`${botName}_remote`);
  await page.getByLabel(/Tic-tac-toe/).check();
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/upload')),
    page.getByRole('button', { name: 'Register' }).click(),
  ]);
  assert.equal(response.status(), 400);
  await page.locator('#remote-form').waitFor();
  assert.match(await page.locator('#upload-error').innerText(), /Loopback.*public address/s);
  assert.equal(await page.getByLabel(/^URL/).inputValue(), 'http://127.0.0.1:9/bot', 'the URL is kept');
  assert.equal(await page.getByLabel('Bot name').inputValue(), `${botName}_remote`, 'the name is kept');
  assert.equal(await page.getByLabel(/Tic-tac-toe/).isChecked(), true, 'the game stays ticked');
});

test('a new version of one\'s bot starts with its ladders ticked', async () => {
  await page.goto(`/upload?bot=${botName}`);
  assert.equal(await page.getByLabel('Bot name').inputValue(), botName);
  assert.equal(await page.getByLabel(/Othello · standard/).isChecked(), true);
  assert.equal(await page.locator('input[name="ladders"]:checked').count(), 1);
});

test('a challenge to an unknown bot without JavaScript shows the form again with the message', async () => {
  await page.goto('/challenge');
  await page.getByLabel('Opponent').fill('nobody-by-this-name');
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/challenge')),
    page.getByRole('button', { name: 'Start the match' }).click(),
  ]);
  assert.equal(response.status(), 404);
  assert.match(await page.locator('#challenge-error').innerText(), /nobody-by-this-name|not found/);
  assert.equal(await page.getByLabel('Opponent').inputValue(), 'nobody-by-this-name');
  assert.equal(await page.getByLabel('Your bot').inputValue(), botName);
});

test('without JavaScript a match page says how to see the replay, not "Loading"', async () => {
  const id = await until('a finished Othello match', async () => {
    const { matches } = await fetch(`${server.url}/api/matches?ladder=othello:std&status=finished&limit=1`).then((r) => r.json());
    return matches[0]?.id;
  }, { timeout: 300_000, every: 2000 });
  await page.goto(`/matches/${id}`);
  const text = await page.locator('#replay').innerText();
  assert.doesNotMatch(text, /Loading/);
  assert.match(text, /download the replay/i);
  assert.ok(await page.locator('#download-json').isVisible());
});

test('no password ever went into a URL', () => {
  assert.ok(urls.length > 5, 'requests were seen');
  for (const url of urls) {
    assert.ok(!url.includes(encodeURIComponent(password)) && !url.includes('no+scripts'), url);
  }
});
