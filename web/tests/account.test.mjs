// Account and bot management in a real browser (issue 42, item 5), with
// JavaScript on and off: an upload ticked for a ladder the bot cannot play
// is accepted on the others, each ladder's verdict shown; retiring and
// un-retiring from the bot's page, each save confirmed (role=status); the
// challenge form offers each bot's own ladders (narrowed by the script,
// checked by the server without it), an agent bot's remote ladder
// included; the agent token page shows this site's own address; changing
// the password signs out the other sessions and revokes the API token;
// deleting the account retires its bots and keeps them as "deleted
// user"'s. Every new or changed page is axe-core clean at 1280 and 375 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import { HOUSE_WASM, axeViolations, launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

const suffix = crypto.randomBytes(3).toString('hex');
const ann = { name: `ann_${suffix}`, password: 'ann has a password' };
const bob = { name: `bob_${suffix}`, password: 'bob has one too' };
const tttBot = `ttt_${suffix}`;
const agentBot = `agent_${suffix}`;
let challengeId;

let server;
let browser;
let js;
let nojs;
let errors;

// Pages checked by axe-core at the end, at both widths.
const checked = new Set();

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 1 });
  browser = await launchBrowser();
  js = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
  // The API refusals the script shows on its forms log a console error.
  errors = watchErrors(js, (text) => /status of 4\d\d/.test(text));
  nojs = await browser.newContext({ baseURL: server.url, javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await js?.close();
  await nojs?.close();
  await browser?.close();
  await server?.stop();
});

async function signUp(page, who) {
  await page.goto('/signup');
  await page.getByLabel('User name').fill(who.name);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL('**/account');
}

// A session of `who` through the API: its cookie pair.
async function apiSession(who) {
  const answer = await fetch(`${server.url}/api/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(who),
  });
  assert.equal(answer.status, 200);
  return answer.headers.get('set-cookie').split(';')[0];
}

async function apiToken(cookie) {
  const me = await fetch(`${server.url}/api/me`, { headers: { Cookie: cookie } }).then((r) => r.json());
  const answer = await fetch(`${server.url}/api/tokens`, { method: 'POST', headers: { Cookie: cookie, 'X-CSRF-Token': me.csrf } });
  assert.equal(answer.status, 201);
  return (await answer.json()).token;
}

const meWith = (headers) => fetch(`${server.url}/api/me`, { headers }).then((r) => r.status);

test('an upload is accepted on the ladders it passes, each ladder\'s verdict shown', async () => {
  const page = await js.newPage();
  await signUp(page, ann);
  await page.goto('/upload');
  await page.getByLabel(/^Module/).setInputFiles(path.join(HOUSE_WASM, 'tictactoe-random.wasm'));
  await page.getByLabel('Bot name').fill(tttBot);
  await page.locator('input[name="ladders"][value="tictactoe:standard"]').check();
  await page.locator('input[name="ladders"][value="othello:std"]').check();
  await page.getByRole('button', { name: 'Upload and check' }).click();
  await page.locator('#verdict[data-state="active"]').waitFor({ timeout: 180_000 });
  const lines = await page.locator('#verdict-ladders li').allInnerTexts();
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.equal(lines[0], 'tictactoe:standard: passed');
  assert.match(lines[1], /^othello:std: refused: /);
  assert.match(await page.locator('#verdict-text').innerText(), /joins tictactoe:standard\.$/);
  assert.match(await page.locator('#reason-text').innerText(), /accepted on tictactoe:standard; refused on the other ladders/);
  await screenshot(page, 'upload-verdicts');
  checked.add('/upload');
  // The bot's page (the result page without JavaScript) says it too.
  await page.goto(`/bots/${tttBot}`);
  assert.match(await page.locator('.versions .reason').first().innerText(), /othello:std: /);
  await page.close();
});

test('the owner retires and un-retires a bot from its page, each save confirmed', async () => {
  const cookie = (await js.cookies()).find((c) => c.name === 'arbiter_session');
  await nojs.addCookies([{ name: cookie.name, value: cookie.value, url: server.url }]);
  // Without JavaScript: plain forms, 303 to the page with the confirmation.
  const page = await nojs.newPage();
  await page.goto(`/bots/${tttBot}`);
  await page.getByRole('button', { name: `Retire ${tttBot}` }).click();
  await page.waitForURL((url) => url.searchParams.get('saved') === 'retired');
  assert.match(await page.locator('#saved[role="status"]').innerText(), /^Saved: the bot is retired/);
  assert.equal(await page.locator('h1 .tag').first().innerText(), 'retired');
  const detail = await fetch(`${server.url}/api/bots/${tttBot}`).then((r) => r.json());
  assert.equal(detail.bot.retired, true);
  checked.add(`/bots/${tttBot}?saved=retired`);
  await page.close();

  // With JavaScript: the API, then the same confirmation.
  const live = await js.newPage();
  await live.goto(`/bots/${tttBot}`);
  await live.getByRole('button', { name: `Un-retire ${tttBot}` }).click();
  await live.waitForURL((url) => url.searchParams.get('saved') === 'unretired');
  assert.match(await live.locator('#saved').innerText(), /back in matchmaking/);
  const back = await fetch(`${server.url}/api/bots/${tttBot}`).then((r) => r.json());
  assert.equal(back.bot.retired, false);
  assert.equal(back.versions[0].status, 'active');
  // Retiring with the script asks first.
  live.expectConfirm = true;
  await live.getByRole('button', { name: `Retire ${tttBot}` }).click();
  await live.waitForURL((url) => url.searchParams.get('saved') === 'retired');
  await live.getByRole('button', { name: `Un-retire ${tttBot}` }).click();
  await live.waitForURL((url) => url.searchParams.get('saved') === 'unretired');
  await screenshot(live, 'bot-unretired');
  checked.add(`/bots/${tttBot}?saved=unretired`);
  await live.close();
});

test('an agent bot: the form mentions no URL, the token page shows this site\'s address', async () => {
  const page = await js.newPage();
  await page.goto('/upload/agent');
  const text = await page.locator('main').innerText();
  assert.doesNotMatch(text, /Posting the URL/);
  assert.equal(await page.locator('input[name="url"]').count(), 0);
  checked.add('/upload/agent');
  await page.getByLabel('Bot name').fill(agentBot);
  await page.locator('input[name="ladders"][value="othello:std"]').check();
  await page.getByRole('button', { name: 'Register' }).click();
  await page.waitForURL(`**/bots/${agentBot}`);
  await page.getByRole('button', { name: 'Issue a new bot token' }).click();
  await page.locator('#bot-token-output').waitFor();
  const example = await page.locator('main pre').innerText();
  assert.ok(example.includes(`--api ${server.url}`), example);
  assert.doesNotMatch(example, /THIS-SITE/);
  assert.equal(await axeViolations(page).then((v) => v.join('\n')), '');
  await page.close();
});

test('the challenge form offers each bot its own ladders, remote ones included', async () => {
  const page = await js.newPage();
  await page.goto('/challenge');
  checked.add('/challenge');
  const ladders = async () => page.locator('#ladder option:not([disabled])').evaluateAll((options) => options.map((o) => o.value));
  await page.getByLabel('Your bot').selectOption(agentBot);
  assert.deepEqual(await ladders(), ['remote:othello:std']);
  await page.getByLabel('Your bot').selectOption(tttBot);
  assert.deepEqual(await ladders(), ['tictactoe:standard']);
  assert.equal(await page.locator('#ladder').inputValue(), 'tictactoe:standard', 'the chosen bot\'s ladder is picked');
  // The agent bot challenges a house bot on its remote ladder: the hall's match.
  await page.getByLabel('Your bot').selectOption(agentBot);
  await page.getByLabel('Opponent').fill('othello-random');
  await page.getByRole('button', { name: 'Start the match' }).click();
  await page.waitForURL(/\/matches\/\d+$/);
  challengeId = Number(new URL(page.url()).pathname.split('/').pop());
  const { match } = await fetch(`${server.url}/api/matches/${challengeId}`).then((r) => r.json());
  assert.equal(match.ladder, 'remote:othello:std');
  await page.close();

  // Without JavaScript every ladder is listed; the server names the bot and
  // the ladder it does not play, and keeps what was chosen.
  const plain = await nojs.newPage();
  await plain.goto('/challenge');
  await plain.getByLabel('Your bot').selectOption(tttBot);
  await plain.getByLabel('Opponent').fill('othello-random');
  await plain.getByLabel('Ladder', { exact: true }).selectOption('remote:othello:std');
  const [answer] = await Promise.all([
    plain.waitForNavigation(),
    plain.getByRole('button', { name: 'Start the match' }).click(),
  ]);
  assert.equal(answer.status(), 400);
  const error = await plain.locator('#challenge-error').innerText();
  assert.ok(error.includes(`${tttBot} does not play remote:othello:std`), error);
  assert.ok(error.includes('tictactoe:standard'), error);
  assert.equal(await plain.getByLabel('Opponent').inputValue(), 'othello-random');
  await plain.close();
});

test('changing the password signs out the other sessions and revokes the API token', async () => {
  const elsewhere = await apiSession(ann);
  const token = await apiToken(elsewhere);
  const page = await nojs.newPage();
  await page.goto('/account');
  checked.add('/account');
  await page.getByLabel('Current password').fill('not my password');
  await page.getByLabel('New password').fill('a brand new password');
  const [refused] = await Promise.all([
    page.waitForNavigation(),
    page.getByRole('button', { name: 'Change the password' }).click(),
  ]);
  assert.equal(refused.status(), 403);
  assert.match(await page.locator('#password-error').innerText(), /current password is wrong/);
  assert.equal(await meWith({ Authorization: `Bearer ${token}` }), 200, 'a refusal changes nothing');
  await screenshot(page, 'account-password-refused');

  await page.getByLabel('Current password').fill(ann.password);
  await page.getByLabel('New password').fill('a brand new password');
  await page.getByRole('button', { name: 'Change the password' }).click();
  await page.waitForURL((url) => url.pathname === '/account' && url.searchParams.get('saved') === 'password');
  assert.match(await page.locator('#saved[role="status"]').innerText(), /^Saved: your password is changed/);
  assert.equal(await page.locator('#account-name').innerText(), ann.name, 'this browser stays signed in');
  checked.add('/account?saved=password');
  assert.equal(await meWith({ Cookie: elsewhere }), 401, 'the other session is signed out');
  assert.equal(await meWith({ Authorization: `Bearer ${token}` }), 401, 'the API token is revoked');
  ann.password = 'a brand new password';
  await page.close();

  // With JavaScript (the JS context's session was revoked too: sign in again).
  const live = await js.newPage();
  await live.goto('/signin?next=/account');
  await live.getByLabel('User name').fill(ann.name);
  await live.getByLabel('Password').fill(ann.password);
  await live.getByRole('button', { name: 'Sign in' }).click();
  await live.waitForURL('**/account');
  await live.getByLabel('Current password').fill(ann.password);
  await live.getByLabel('New password').fill('short');
  await live.locator('#new-password').evaluate((input) => input.removeAttribute('minlength'));
  await live.getByRole('button', { name: 'Change the password' }).click();
  await live.locator('#password-form .form-error:not([hidden])').waitFor();
  assert.match(await live.locator('#password-form .form-error').innerText(), /8 to 256 characters/);
  await live.getByLabel('New password').fill('the third password');
  await live.getByRole('button', { name: 'Change the password' }).click();
  await live.waitForURL((url) => url.searchParams.get('saved') === 'password');
  assert.match(await live.locator('#saved').innerText(), /^Saved: your password is changed/);
  ann.password = 'the third password';
  await live.close();
});

test('the new and changed pages are axe-core clean at 1280 and 375 px', async () => {
  const page = await js.newPage();
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    for (const pathname of checked) {
      await page.goto(pathname);
      const violations = await axeViolations(page);
      assert.deepEqual(violations, [], `${pathname} at ${width} px:\n${violations.join('\n')}`);
    }
    // The account page as the server shows a refused form (the script
    // kept out of the way: the form posts to the site).
    await page.goto('/account');
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password').fill('whatever it is now');
    // form.submit() skips the script's submit handler.
    await Promise.all([page.waitForNavigation(), page.locator('#password-form').evaluate((form) => form.submit())]);
    assert.match(await page.locator('#password-error').innerText(), /current password is wrong/);
    const violations = await axeViolations(page);
    assert.deepEqual(violations, [], `/account with a refusal at ${width} px:\n${violations.join('\n')}`);
  }
  await page.close();
});

test('deleting the account retires its bots and keeps them as deleted user\'s', async () => {
  const bobPage = await nojs.newPage();
  await nojs.clearCookies();
  await signUp(bobPage, bob);
  await bobPage.close();
  // Ann's last session is the JS context's.
  const page = await js.newPage();
  await page.goto('/account');
  await page.locator('#delete-password').fill(ann.password);
  await page.getByLabel(/^Type your user name/).fill(bob.name);
  page.expectConfirm = true;
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.locator('#delete-form .form-error:not([hidden])').waitFor();
  assert.match(await page.locator('#delete-form .form-error').innerText(), /type your user name/);
  assert.equal((await fetch(`${server.url}/api/users/${ann.name}`)).status, 200, 'a refusal deletes nothing');

  await page.getByLabel(/^Type your user name/).fill(ann.name);
  page.expectConfirm = true;
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.waitForURL((url) => url.pathname === '/' && url.searchParams.get('saved') === 'deleted');
  assert.match(await page.locator('#saved[role="status"]').innerText(), /account is deleted/);
  assert.equal(await page.locator('header a[data-user]').count(), 0, 'signed out');
  await screenshot(page, 'account-deleted');
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    assert.deepEqual(await axeViolations(page), [], `/?saved=deleted at ${width} px`);
  }

  assert.equal((await fetch(`${server.url}/api/users/${ann.name}`)).status, 404);
  const signIn = await fetch(`${server.url}/api/sessions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ann),
  });
  assert.equal(signIn.status, 401, 'nobody signs in as the deleted account');
  // The bots stay, retired, owned by "deleted user"; the match stays.
  for (const bot of [tttBot, agentBot]) {
    const detail = await fetch(`${server.url}/api/bots/${bot}`).then((r) => r.json());
    assert.equal(detail.bot.retired, true, bot);
    assert.equal(detail.bot.owner, 'deleted user', bot);
  }
  await page.goto(`/bots/${tttBot}`);
  assert.match(await page.locator('main').innerText(), /Owned by deleted user/);
  const kept = await fetch(`${server.url}/api/matches/${challengeId}`).then((r) => r.json());
  assert.ok(JSON.stringify(kept.match).includes(agentBot), 'its match is kept');
  // The name is free again.
  const again = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: ann.name, password: 'a new ann entirely' }),
  });
  assert.equal(again.status, 201);
  await page.close();
  assert.deepEqual(errors, []);
});
