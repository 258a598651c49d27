// Getting started from the site alone, in a real browser: the guide's
// download links give this server's own `arbiter` executable (the bytes of
// the running binary, with the SHA-256 the guide and arbiter.sha256 show)
// and each kit as a .tar.gz holding what `arbiter new` writes; the footer
// leads to the rendered API reference. Both pages fit a phone screen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ARBITER, launchBrowser, requireBuilt, screenshot, startServer, watchErrors } from './support.mjs';

let server;
let browser;
let context;
let page;
let errors;
let tmp;

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 0 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  errors = watchErrors(context);
  page = await context.newPage();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arbiter-downloads-'));
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

// Clicks `link` on the page and saves what the browser downloads under
// `name` in the test's folder; returns the file's path and suggested name.
async function download(link, name) {
  const [file] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const saved = path.join(tmp, name);
  await file.saveAs(saved);
  return { saved, suggested: file.suggestedFilename() };
}

test('the guide offers the server\'s own executable with its version and SHA-256', async () => {
  await page.goto('/guide');
  // The first step of the guide is where the tools come from.
  const firstStep = await page.locator('main h2').first().innerText();
  assert.match(firstStep, /Get the tools/);
  const link = page.locator('#download-arbiter');
  assert.match(await link.innerText(), /Download arbiter \d+\.\d+\.\d+ for \S+/);
  const shown = (await page.locator('#arbiter-sha256').innerText()).trim();
  assert.match(shown, /^[0-9a-f]{64}$/);

  const { saved, suggested } = await download(link, 'arbiter');
  assert.equal(suggested, 'arbiter');
  const bytes = fs.readFileSync(saved);
  const running = fs.readFileSync(ARBITER);
  assert.equal(bytes.length, running.length, 'the download is the running binary');
  assert.ok(bytes.equals(running), 'the download is the running binary, byte for byte');
  assert.equal(sha256(bytes), shown, 'the guide shows the download\'s SHA-256');

  const digest = await download(page.locator('a[href="/download/arbiter.sha256"]'), 'arbiter.sha256');
  assert.equal(fs.readFileSync(digest.saved, 'utf8'), `${shown}  arbiter\n`);
  // What the guide tells the reader to run.
  assert.match(execFileSync('sha256sum', ['-c', 'arbiter.sha256'], { cwd: tmp, encoding: 'utf8' }), /arbiter: OK/);
  await screenshot(page, 'guide-downloads', { fullPage: false });
});

test('a kit downloaded from the guide is the folder arbiter new writes', async () => {
  await page.goto('/guide#tools-kits');
  const { saved, suggested } = await download(page.locator('a[href="/download/kits/c.tar.gz"]'), 'c.tar.gz');
  assert.equal(suggested, 'arbiter-kit-c.tar.gz');
  const bytes = fs.readFileSync(saved);
  // The archive is built deterministically: the server answers the same bytes again.
  const again = Buffer.from(await (await fetch(`${server.url}/download/kits/c.tar.gz`)).arrayBuffer());
  assert.equal(sha256(again), sha256(bytes));

  const unpacked = path.join(tmp, 'unpacked');
  fs.mkdirSync(unpacked);
  execFileSync('tar', ['xzf', saved, '-C', unpacked]);
  const kit = path.join(unpacked, 'arbiter-kit-c');
  const made = path.join(tmp, 'made');
  execFileSync(ARBITER, ['new', 'c', 'my-bot', '--dir', made]);
  const list = (dir) => execFileSync('find', ['.', '-type', 'f'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').sort();
  const files = list(kit);
  assert.deepEqual(files, list(made), 'the archive holds what arbiter new writes');
  for (const needed of ['./README.md', './KIT-README.md', './setup.sh', './build.sh', './bot.c', './arbiter.h']) {
    assert.ok(files.includes(needed), `${needed} is in the archive: ${files}`);
  }
  assert.ok(!files.some((f) => f.endsWith('test.sh')), 'no test-only file');
  for (const file of files) {
    assert.equal(sha256(fs.readFileSync(path.join(kit, file))), sha256(fs.readFileSync(path.join(made, file))), file);
  }
  assert.ok((fs.statSync(path.join(kit, 'setup.sh')).mode & 0o111) !== 0, 'setup.sh is executable');
});

test('the footer leads to the rendered API reference', async () => {
  await page.goto('/');
  await page.locator('footer').getByRole('link', { name: 'API reference' }).click();
  await page.waitForURL(`${server.url}/api/reference`);
  await page.getByRole('heading', { level: 1, name: 'JSON API reference' }).waitFor();
  // An operation links to the schema of its answer.
  const op = page.locator('#op-get-api-ladders-ladder-leaderboard');
  assert.match(await op.innerText(), /GET \/api\/ladders\/\{ladder\}\/leaderboard/);
  await page.locator('section[aria-labelledby="op-get-api-ladders-ladder-leaderboard"] a[href="#schema-Leaderboard"]').first().click();
  assert.match(page.url(), /#schema-Leaderboard$/);
  assert.equal(await page.locator('#schema-Leaderboard').innerText(), 'Leaderboard');
  await screenshot(page, 'api-reference', { fullPage: false });
});

test('the guide and the API reference fit a phone screen', async () => {
  const phone = await browser.newContext({ baseURL: server.url, viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });
  const phoneErrors = watchErrors(phone);
  const p = await phone.newPage();
  for (const url of ['/guide', '/api/reference']) {
    await p.goto(url);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `${url} scrolls sideways by ${overflow}px on a phone`);
  }
  await phone.close();
  assert.deepEqual(phoneErrors, []);
});

test('no page logged a JavaScript error', () => {
  assert.deepEqual(errors, []);
});
