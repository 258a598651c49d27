// The skirmish viewer in a real browser, against a fresh `arbiter serve`
// whose house bots play skirmish:standard: a finished match's page rebuilds
// both games tick by tick from their frames, its rebuilt end equals the
// replay's record (ticks played, the loser eliminated), the fog of war
// hides what a side cannot see, the timeline steps, and the training data
// downloads; a running match's map is drawn live; the viewer has a legend,
// graphs with axes, a map described in words, and the board viewer's keys
// (Home, End, Space after a click on the map). No page may log a
// JavaScript error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { launchBrowser, requireBuilt, screenshot, startServer, until, watchErrors } from './support.mjs';

let server;
let browser;
let context;
let page;
let errors;
let matchId;

before(async () => {
  requireBuilt();
  server = await startServer({ workers: 2 });
  browser = await launchBrowser();
  context = await browser.newContext({ baseURL: server.url, acceptDownloads: true, viewport: { width: 1280, height: 1000 } });
  errors = watchErrors(context);
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

test('a skirmish match page rebuilds each game to its recorded end', async () => {
  const finished = await until('a finished skirmish match', async () => {
    const { matches } = await api('/api/matches?ladder=skirmish:standard&status=finished&limit=1');
    return matches[0];
  }, { timeout: 300_000, every: 2000 });
  matchId = finished.id;
  const replay = await api(`/api/matches/${matchId}/replay`);
  assert.equal(replay.game, 'skirmish');

  await page.goto(`/matches/${matchId}`);
  const viewer = page.locator('#skirmish[data-verified="ok"]');
  await viewer.waitFor({ timeout: 60_000 });
  for (const [i, game] of replay.games.entries()) {
    await page.locator(`.ctl-game-${i + 1}`).click();
    await page.locator(`#skirmish[data-game="${i + 1}"]`).waitFor();
    await page.locator('.ctl-end').click();
    const ticks = game.record.game.ticks.length;
    await page.locator(`#skirmish[data-tick="${ticks}"]`).waitFor();
    // The rebuilt end against the replay's record: the side that scored 0
    // after an elimination has no building left; the winner has some.
    const end = await page.evaluate(() => {
      const viewer = window.ArbiterSkirmish;
      const game = viewer.games[viewer.index];
      const snap = window.ArbiterSkirmishFrames.toSnapshot(viewer.state);
      const buildings = [0, 0];
      snap.units.forEach((u) => { if (game.frames.kinds[u[5]].size > 1) buildings[u[4] - 1] += 1; });
      return { tick: snap.tick, buildings, units: snap.units.length, endUnits: game.frames.end.units.length };
    });
    assert.equal(end.tick, ticks, `game ${i + 1}: the rebuilt state is at the record's last tick`);
    assert.equal(end.units, end.endUnits);
    if (game.reason === 'elimination') {
      const loser = game.scores[0] === 0 ? 0 : 1;
      assert.equal(end.buildings[loser], 0, `game ${i + 1}: the eliminated side has no building`);
      assert.ok(end.buildings[1 - loser] > 0, `game ${i + 1}: the winner has buildings`);
    }
  }
  await screenshot(page, 'skirmish');
});

test('the fog of war hides the enemy a side cannot see, and the timeline steps', async () => {
  await page.locator('.ctl-game-1').click();
  // Early in the game the bases are far apart: neither side sees the other.
  await page.locator('#skirmish').focus();
  await page.locator('.ctl-start').click();
  for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowRight');
  await page.locator('#skirmish[data-tick="10"]').waitFor();
  const all = (await page.locator('#skirmish').getAttribute('data-shown-units')).split(',').map(Number);
  assert.ok(all[0] > 0 && all[1] > 0, `both sides are drawn: ${all}`);
  await page.locator('.ctl-fog').selectOption('1');
  await page.locator('#skirmish[data-fog="1"]').waitFor();
  const fogged = (await page.locator('#skirmish').getAttribute('data-shown-units')).split(',').map(Number);
  assert.equal(fogged[0], all[0], 'side 1 sees all its own units');
  assert.equal(fogged[1], 0, 'side 1 sees no enemy at tick 10');
  await page.locator('.ctl-fog').selectOption('0');
  await page.locator('.ctl-back').click();
  await page.locator('#skirmish[data-tick="9"]').waitFor();
  await screenshot(page, 'skirmish-early');
});

test('the viewer by keyboard: keys act on the focused control', async () => {
  await page.goto(`/matches/${matchId}`);
  await page.locator('#skirmish[data-verified="ok"]').waitFor({ timeout: 60_000 });
  const viewer = page.locator('#skirmish');
  const play = page.locator('.ctl-play');
  assert.notEqual(await viewer.getAttribute('tabindex'), '0', 'the viewer itself is no tab stop');

  // Tab to "Game 2" and press Space: it shows game 2, nothing plays.
  await page.locator('.ctl-game-1').focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Game 2');
  await page.keyboard.press('Space');
  await page.locator('#skirmish[data-game="2"]').waitFor();
  assert.equal(await page.locator('.ctl-game-2').getAttribute('aria-pressed'), 'true');
  assert.equal(await play.getAttribute('aria-label'), 'Play', 'Space on "Game 2" did not start playback');
  const tick = await viewer.getAttribute('data-tick');
  // Enter on "Game 1" switches back.
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Enter');
  await page.locator('#skirmish[data-game="1"]').waitFor();

  // Space in the view list acts on the list, not on playback.
  await page.locator('.ctl-fog').focus();
  await page.keyboard.press('Space');
  await page.keyboard.press('Escape');
  assert.equal(await play.getAttribute('aria-label'), 'Play', 'Space in the view list did not start playback');
  assert.equal(await viewer.getAttribute('data-tick'), tick);
  await page.keyboard.press('ArrowDown');
  await page.locator('#skirmish[data-fog="1"]').waitFor();

  // The Play button is named by its state.
  await play.focus();
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-label'), 'Pause');
  assert.match(await play.innerText(), /Pause/);
  await page.keyboard.press('Space');
  assert.equal(await play.getAttribute('aria-label'), 'Play');
  assert.match(await play.innerText(), /Play/);
  await page.locator('.ctl-fog').selectOption('0');
});

test('the viewer has a legend, graphs with axes, a map in words, and Home, End and Space', async () => {
  await page.goto(`/matches/${matchId}`);
  await page.locator('#skirmish[data-verified="ok"]').waitFor({ timeout: 60_000 });
  const viewer = page.locator('#skirmish');
  // The legend names every tile and piece the map draws.
  const legend = (await page.locator('.skirmish-legend li').allInnerTexts()).map((t) => t.trim());
  for (const name of ['Open ground', 'Forest (lumber)', 'Rock', 'Gold mine', 'Blue building', 'Blue soldier', 'Blue worker', 'Red building', 'Red soldier', 'Red worker', 'Out of sight (fog of war)']) {
    assert.ok(legend.includes(name), `the legend names "${name}" (${legend.join(' | ')})`);
  }
  // The map and the graphs say what they show, at the current tick.
  const last = Number(await page.evaluate(() => window.ArbiterSkirmish.games[0].last));
  const map = page.locator('canvas.skirmish-map');
  // Keys after a click on the map, as in the board games' viewer.
  await map.click();
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skirmish', 'a click on the map focuses the viewer');
  await page.keyboard.press('End');
  await page.locator(`#skirmish[data-tick="${last}"]`).waitFor();
  assert.match(await map.getAttribute('aria-label'), new RegExp(`^Map of game 1 \\(\\d+×\\d+ tiles\\) at tick ${last} of ${last}: .+ \\(blue\\) \\d+ units`));
  await page.keyboard.press('Home');
  await page.locator('#skirmish[data-tick="0"]').waitFor();
  assert.match(await map.getAttribute('aria-label'), /at tick 0 of /);
  await page.keyboard.press('Space');
  await until('playback to move the tick', async () => Number(await viewer.getAttribute('data-tick')) > 0, { timeout: 5_000, every: 50 });
  await page.keyboard.press('Space');
  assert.equal(await page.locator('.ctl-play').getAttribute('aria-label'), 'Play', 'Space paused it again');
  const graph = await page.locator('canvas.skirmish-graph').getAttribute('aria-label');
  assert.match(graph, new RegExp(`over its ${last} ticks\\. Gold \\+ lumber: .+ peaked at \\d+ and ended at \\d+`));
  // The axes are drawn: the left axis of the top graph is a line of
  // grey pixels at x = 52 from its top to its bottom.
  const axis = await page.evaluate(() => {
    const canvas = document.querySelector('canvas.skirmish-graph');
    const data = canvas.getContext('2d').getImageData(52, 30, 1, 90).data;
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 100) inked += 1;
    return inked;
  });
  assert.ok(axis >= 85, `the top graph's value axis is drawn (${axis} of 90 pixels)`);
  await screenshot(page, 'skirmish-legend');
});

test('a running skirmish match is drawn live', async () => {
  // House matches run back to back; one may end before its page shows it
  // live: try the next running one.
  let drawn = null;
  for (let attempt = 0; attempt < 10 && !drawn; attempt++) {
    const running = await until('a running skirmish match', async () => {
      const { matches } = await api('/api/matches?ladder=skirmish:standard&status=running&limit=1');
      return matches[0];
    }, { timeout: 120_000, every: 200 });
    await page.goto(`/matches/${running.id}`);
    try {
      await page.locator('#live[data-drawn-tick]').waitFor({ timeout: 15_000 });
      drawn = await page.locator('#live').getAttribute('data-drawn-tick');
      const width = await page.locator('#live canvas.skirmish-map').evaluate((c) => c.width);
      assert.ok(width >= 48 * 4, `the live map is drawn (${width} px wide)`);
      await screenshot(page, 'skirmish-live');
    } catch {
      // It finished first: the page reloaded without the live section.
    }
  }
  assert.ok(drawn !== null, 'a live map was drawn');
  assert.ok(Number(drawn) >= 1, `the map after a played tick (${drawn})`);
});

test('the training data downloads as gzipped JSON lines', async () => {
  // The live page of the test before may reload itself as its match ends,
  // aborting a navigation that starts at that moment: then go again.
  await page.goto(`/matches/${matchId}`).catch(() => page.goto(`/matches/${matchId}`));
  // The first download makes the file (seconds in a test build).
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 120_000 }),
    page.locator('#download-jsonl').click(),
  ]);
  assert.equal(download.suggestedFilename(), `arbiter-match-${matchId}.jsonl.gz`);
  const text = zlib.gunzipSync(fs.readFileSync(await download.path())).toString('utf8');
  const lines = text.trim().split('\n').map((l) => JSON.parse(l));
  const replay = await api(`/api/matches/${matchId}/replay`);
  const ticks = replay.games.reduce((n, g) => n + g.record.game.ticks.length, 0);
  assert.equal(lines.length, 2 * ticks, 'one line per tick and side');
  assert.equal(lines[0].game, 1);
  assert.equal(lines[0].tick, 0);
  assert.ok(lines[0].obs.map, 'the first observation has the map');
  // Made once, its size is on the link from then on.
  await page.goto(`/matches/${matchId}`);
  assert.match(await page.locator('#download-jsonl').innerText(), /\(JSONL, gzip, [\d.]+ [KM]?B\)/);
  assert.deepEqual(errors, []);
});
