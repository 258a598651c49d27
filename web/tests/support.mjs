// Shared by the browser tests: start the real `arbiter serve`, launch
// Debian's chromium through playwright-core, watch pages for JavaScript
// errors, and build tiny WebAssembly modules.
//
// Assumes `cargo build -p arbiter` has run (it builds
// target/debug/arbiter and the house bots in target/house-bots). Override the
// binary with ARBITER_BIN and the browser with CHROMIUM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEB = path.join(ROOT, 'web');
export const SCREENSHOTS = path.join(WEB, 'screenshots');
export const ARBITER = process.env.ARBITER_BIN || path.join(ROOT, 'target', 'debug', 'arbiter');
export const HOUSE_WASM = path.join(ROOT, 'target', 'house-bots', 'wasm32-wasip1', 'house-bots');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export function requireBuilt() {
  for (const file of [ARBITER, path.join(HOUSE_WASM, 'othello-greedy.wasm')]) {
    if (!fs.existsSync(file)) {
      throw new Error(`${file} is missing: run \`cargo build -p arbiter\` first`);
    }
  }
}

// Starts `arbiter serve` on a fresh data directory and a free port; resolves
// with {url, stop()} once it prints `listening on http://ADDR`.
export function startServer({ workers = 2 } = {}) {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'arbiter-web-'));
  const child = spawn(ARBITER, ['serve', '--data', data, '--listen', '127.0.0.1:0', '--workers', String(workers)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  let log = '';
  child.stderr.on('data', (chunk) => {
    log += chunk;
    if (log.length > 200_000) log = log.slice(-100_000);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start in 60 s:\n${out}\n${log}`)), 60_000);
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}:\n${out}\n${log}`)));
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          data,
          log: () => log,
          async stop() {
            if (child.exitCode === null) {
              const exited = new Promise((r) => child.once('exit', r));
              child.kill('SIGINT');
              const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
              await exited;
              clearTimeout(killer);
            }
            fs.rmSync(data, { recursive: true, force: true });
          },
        });
      }
    });
  });
}

// Debian's chromium, headless. Playwright gives every launch a fresh
// temporary profile (user data directory).
export function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

// Records JavaScript errors of every page of `context`: uncaught exceptions
// and console errors. `allow(text, url)` may excuse an expected console
// error (an API answer of 4xx the test provoked). Unexpected dialogs (an
// `alert` from injected script, say) are errors too.
export function watchErrors(context, allow = () => false) {
  const errors = [];
  const watch = (page) => {
    page.on('pageerror', (error) => errors.push(`pageerror on ${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const where = message.location()?.url || '';
      if (allow(message.text(), where, page.url())) return;
      errors.push(`console error on ${page.url()}: ${message.text()} ${where}`);
    });
    page.on('dialog', async (dialog) => {
      if (dialog.type() === 'confirm' && page.expectConfirm) {
        page.expectConfirm = false;
        await dialog.accept();
        return;
      }
      errors.push(`unexpected ${dialog.type()} dialog on ${page.url()}: ${dialog.message()}`);
      await dialog.dismiss();
    });
  };
  context.on('page', watch);
  context.pages().forEach(watch);
  return errors;
}

export async function screenshot(page, name, { fullPage = true } = {}) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
}

export async function until(what, probe, { timeout = 120_000, every = 1000 } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

// --- A tiny WebAssembly assembler, for modules the tests upload. -----------

function uleb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

function sleb(n) {
  const out = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(byte & 0x40)) || (n === -1 && byte & 0x40)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const str = (s) => [...uleb(Buffer.byteLength(s)), ...Buffer.from(s)];
const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const vec = (items) => [...uleb(items.length), ...items.flat()];

// A WASI command that writes `stderr` to fd 2 and exits without answering:
// valid WebAssembly that passes the static checks and fails the smoke match.
export function silentBotWasm(stderr) {
  const text = Buffer.from(stderr);
  const I32 = 0x7f;
  const types = vec([
    [0x60, ...vec([[I32], [I32], [I32], [I32]]), ...vec([[I32]])], // fd_write
    [0x60, 0, 0], // _start
  ]);
  const imports = vec([[...str('wasi_snapshot_preview1'), ...str('fd_write'), 0x00, 0]]);
  const functions = vec([[1]]);
  const memory = vec([[0x00, 1]]);
  const exports = vec([
    [...str('_start'), 0x00, 1],
    [...str('memory'), 0x02, 0],
  ]);
  // _start: fd_write(2, iovs=0, 1, nwritten=8); drop
  const body = [0, 0x41, ...sleb(2), 0x41, ...sleb(0), 0x41, ...sleb(1), 0x41, ...sleb(8), 0x10, 0, 0x1a, 0x0b];
  const code = vec([[...uleb(body.length), ...body]]);
  // Memory: the iovec {ptr 16, len} at 0, the text at 16.
  const iovec = [16, 0, 0, 0, ...[0, 1, 2, 3].map((i) => (text.length >> (8 * i)) & 0xff)];
  const data = vec([
    [0, 0x41, ...sleb(0), 0x0b, ...uleb(iovec.length), ...iovec],
    [0, 0x41, ...sleb(16), 0x0b, ...uleb(text.length), ...text],
  ]);
  return Buffer.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, types),
    ...section(2, imports),
    ...section(3, functions),
    ...section(5, memory),
    ...section(7, exports),
    ...section(10, code),
    ...section(11, data),
  ]);
}

// --- Accessibility checks. ---------------------------------------------------

// axe-core's own script (npm `axe-core`, locked in web/package-lock.json).
export const AXE_SOURCE = fs.readFileSync(path.join(WEB, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

// The WCAG 2.1 A and AA rules of axe-core.
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

// Runs axe-core on the page as it is now (the source is injected with
// evaluate, so the site's Content-Security-Policy does not apply to it) and
// returns its violations as short, readable lines.
export async function axeViolations(page) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (tags) => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ').slice(0, 200)}`),
      count: v.nodes.length,
    }));
  }, WCAG_TAGS);
  return violations.map((v) => `${v.id} (${v.impact}, ${v.count}×): ${v.help}\n    ${v.nodes.join('\n    ')}`);
}

// Every tab stop of the page in order, found by pressing Tab from the top
// until focus leaves the page or comes back round: each with its tag, its
// accessible name (as far as the page can tell) and whether a focus ring
// shows (an outline or box shadow while focused).
export async function tabStops(page, { limit = 300 } = {}) {
  await page.evaluate(() => {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    window.scrollTo(0, 0);
  });
  // Start before the first element of the page.
  await page.locator('body').evaluate((body) => {
    const start = document.createElement('span');
    start.id = 'tab-start';
    start.tabIndex = -1;
    body.prepend(start);
    start.focus();
  });
  const stops = [];
  let first = null;
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate(() => {
      const e = document.activeElement;
      if (!e || e === document.body || e.id === 'tab-start') return null;
      if (!e.dataset.tabStop) e.dataset.tabStop = String(Math.random()).slice(2);
      const style = getComputedStyle(e);
      const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) || (style.boxShadow && style.boxShadow !== 'none');
      const labels = e.labels && e.labels.length ? [...e.labels].map((l) => l.textContent).join(' ') : '';
      const labelledBy = (e.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean)
        .map((id) => document.getElementById(id)?.textContent || '').join(' ');
      const name = (e.getAttribute('aria-label') || labelledBy || labels || e.getAttribute('title') || e.textContent || e.value || '').trim();
      return { key: e.dataset.tabStop, tag: e.tagName.toLowerCase(), id: e.id, cls: e.className, name, ring };
    });
    if (!stop || stop.key === first) break;
    if (first === null) first = stop.key;
    stops.push(stop);
  }
  await page.evaluate(() => document.getElementById('tab-start')?.remove());
  return stops;
}

// Edits the profile of `bot` (the signed-in user's) on its page through the
// form, with a photo taken as a screenshot of `page`, and checks what the
// page shows after: the bio as text (escaped), the photo served as a PNG.
// The form is a plain one, so this works with JavaScript on or off.
export async function editProfile(page, request, bot, bio) {
  const photo = await page.screenshot({ clip: { x: 0, y: 0, width: 160, height: 120 } });
  await page.goto(`/bots/${bot}`);
  await page.locator('#profile-edit summary').click();
  await page.getByLabel(/^Bio/).fill(bio);
  await page.getByLabel(/^Photo/).setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: photo });
  await page.getByLabel(/Automatic matching/).check();
  await page.getByRole('button', { name: 'Save the profile' }).click();
  await page.waitForURL((url) => url.pathname === `/bots/${bot}` && url.searchParams.get('saved') === 'profile');
  assert.match(await page.locator('#saved[role="status"]').innerText(), /^Saved: the profile/, 'the save is confirmed');
  assert.equal(await page.locator('#bot-bio').innerText(), bio, 'the bio shows as written, as text');
  assert.equal(await page.locator('#bot-bio *').count(), 0, 'markup in the bio is not markup');
  const src = await page.locator('#bot-photo').getAttribute('src');
  assert.match(src, /^\/bots\/.+\/photo\.png\?v=[0-9a-f]{12}$/);
  const served = await request.get(src);
  assert.equal(served.status(), 200);
  assert.equal(served.headers()['content-type'], 'image/png');
  assert.equal(served.headers()['x-content-type-options'], 'nosniff');
  // A square thumbnail of the screenshot's 120-pixel side.
  const png = await served.body();
  assert.equal(png.readUInt32BE(16), 120);
  assert.equal(png.readUInt32BE(20), 120);
}
