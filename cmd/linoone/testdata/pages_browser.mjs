// Opens the resolver's pages for people (issue 41 item 4) in headless Chromium
// (Debian's /usr/bin/chromium, driven by playwright-core; never a downloaded
// browser): each URL must answer its status with a page whose <h1> is the expected
// title, run no script, load nothing else, and leave the console clean (a CSP
// violation is a console error). Chromium reports a navigation answered 404 or 410
// as "Failed to load resource" on the console: that line, and only that one, is the
// status itself and is counted apart. Saves a screenshot of each page.
//
// Usage: node pages_browser.mjs CASES_JSON SCREENSHOT_DIR
// CASES_JSON is [{"name": "…", "url": "…", "status": 404, "title": "…"}, …]. Prints
// one JSON report on stdout; exits 1 when a check fails.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [casesJSON, shots] = process.argv.slice(2);
if (!casesJSON || !shots) {
  console.error('usage: node pages_browser.mjs CASES_JSON SCREENSHOT_DIR');
  process.exit(2);
}
const cases = JSON.parse(casesJSON);
const statusLine = /^Failed to load resource: the server responded with a status of (404|410) /;

const profile = mkdtempSync(join(tmpdir(), 'linoone-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 900, height: 500 },
});
const report = { pages: [], ok: true };
try {
  const page = context.pages()[0] ?? await context.newPage();
  for (const c of cases) {
    const r = { name: c.name, url: c.url, status: 0, requests: [], consoleErrors: [], statusLines: 0, problems: [] };
    const onRequest = (req) => r.requests.push(req.url());
    const onConsole = (msg) => {
      if (msg.type() !== 'error') return;
      if (statusLine.test(msg.text())) r.statusLines++; else r.consoleErrors.push(msg.text());
    };
    const onError = (err) => r.consoleErrors.push(String(err));
    context.on('request', onRequest);
    page.on('console', onConsole);
    page.on('pageerror', onError);
    const res = await page.goto(c.url, { waitUntil: 'load' });
    r.status = res ? res.status() : 0;
    r.contentType = res ? res.headers()['content-type'] : '';
    r.h1 = await page.locator('h1').innerText().catch(() => '');
    r.scripts = await page.locator('script').count();
    r.jsEnabledScripts = await page.evaluate(() => document.scripts.length);
    await page.screenshot({ path: join(shots, `page-${c.name}.png`), fullPage: true });
    context.off('request', onRequest);
    page.off('console', onConsole);
    page.off('pageerror', onError);
    if (r.status !== c.status) r.problems.push(`status ${r.status}, want ${c.status}`);
    if (!String(r.contentType).startsWith('text/html')) r.problems.push(`content type ${r.contentType}`);
    if (r.h1 !== c.title) r.problems.push(`h1 "${r.h1}", want "${c.title}"`);
    if (r.scripts !== 0 || r.jsEnabledScripts !== 0) r.problems.push('the page holds a script');
    if (r.requests.length !== 1 || r.requests[0] !== c.url) r.problems.push(`requests ${JSON.stringify(r.requests)}, want only the page`);
    if (r.consoleErrors.length !== 0) r.problems.push(`console errors ${JSON.stringify(r.consoleErrors)}`);
    if (r.problems.length) report.ok = false;
    report.pages.push(r);
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(report, null, 2));
process.exit(report.ok ? 0 : 1);
