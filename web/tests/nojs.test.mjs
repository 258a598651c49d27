// The site with JavaScript turned off, in a real browser: every form posts
// to the site itself (a hidden CSRF field, then a 303), so a visitor whose
// scripts are blocked or failed can sign up, sign out, sign in and upload a
// bot. The password never appears in a URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { HOUSE_WASM, launchBrowser, requireBuilt, screenshot, startServer, until } from './support.mjs';

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

test('the account page issues a token without JavaScript', async () => {
  await page.getByRole('button', { name: 'Issue a new API token' }).click();
  await page.waitForURL('**/account/token');
  const token = await page.locator('#token-output').inputValue();
  assert.match(token, /^arb_[0-9a-f]{64}$/);
  const me = await fetch(`${server.url}/api/me`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json());
  assert.equal(me.user.name, user);
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

test('no password ever went into a URL', () => {
  assert.ok(urls.length > 5, 'requests were seen');
  for (const url of urls) {
    assert.ok(!url.includes(encodeURIComponent(password)) && !url.includes('no+scripts'), url);
  }
});
