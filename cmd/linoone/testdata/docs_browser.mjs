// Opens the management API's /docs in headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core; never a downloaded browser), checks that every operation
// of openapi.yaml is on the page, that no request left the local host and that the
// console stayed clean (a CSP violation is a console error), that the navigation's
// links land on visible sections and that examples show as text, and saves a full-page
// screenshot. Run by TestDocsInBrowser (docs_browser_test.go).
//
// Usage: node docs_browser.mjs URL OPERATIONS_JSON SCREENSHOT_PNG
// OPERATIONS_JSON is [{"operationId": "…", "summary": "…"}, …]. Prints one JSON
// report on stdout; exits 1 when a check fails.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [url, opsJSON, screenshot] = process.argv.slice(2);
if (!url || !opsJSON || !screenshot) {
  console.error('usage: node docs_browser.mjs URL OPERATIONS_JSON SCREENSHOT_PNG');
  process.exit(2);
}
const operations = JSON.parse(opsJSON);
const localHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

// A fresh profile each run; the flags keep Chromium from calling home at start.
const profile = mkdtempSync(join(tmpdir(), 'linoone-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
const report = { url, status: 0, requests: [], external: [], consoleErrors: [], missing: [], screenshot };
try {
  context.on('request', (req) => {
    report.requests.push(req.url());
    const u = new URL(req.url());
    if (!['data:', 'blob:', 'about:'].includes(u.protocol) && !localHosts.has(u.hostname)) {
      report.external.push(req.url());
    }
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (msg) => { if (msg.type() === 'error') report.consoleErrors.push(msg.text()); });
  page.on('pageerror', (err) => report.consoleErrors.push(String(err)));

  const res = await page.goto(url, { waitUntil: 'load' });
  report.status = res ? res.status() : 0;
  report.title = await page.title();
  for (const op of operations) {
    const section = page.locator(`[id="operation/${op.operationId}"]`);
    if (await section.count() !== 1 || !(await section.isVisible())) {
      report.missing.push(`${op.operationId}: no visible section`);
      continue;
    }
    const text = await section.innerText();
    if (!text.includes(op.summary)) report.missing.push(`${op.operationId}: summary "${op.summary}" not shown`);
    if (!text.includes(op.operationId)) report.missing.push(`${op.operationId}: operationId not shown`);
    if (await page.locator(`nav a[href="#operation/${op.operationId}"]`).count() < 1) {
      report.missing.push(`${op.operationId}: not in the navigation`);
    }
  }
  // Every navigation link (operations, schemas, problem types) lands on a visible section.
  const navTargets = await page.locator('nav a[href^="#"]').evaluateAll((as) => as.map((a) => a.getAttribute('href').slice(1)));
  report.navLinks = navTargets.length;
  for (const id of navTargets) {
    const target = page.locator(`[id="${id}"]`);
    if (await target.count() !== 1 || !(await target.isVisible())) report.missing.push(`nav link #${id}: no visible target`);
  }
  if (!navTargets.some((id) => id.startsWith('schema/'))) report.missing.push('nav links no schema');
  // Examples are shown as text blocks, e.g. the body a client sends to issue a short URL.
  report.examples = await page.locator('main pre code').count();
  const body = await page.locator('[id="operation/shorten"] pre code').first().innerText().catch(() => '');
  if (!body.includes('"target_url"')) report.missing.push('shorten: request body example not shown');
  await page.screenshot({ path: screenshot, fullPage: true });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
report.ok = report.status === 200 && report.missing.length === 0 &&
  report.external.length === 0 && report.consoleErrors.length === 0;
console.log(JSON.stringify(report, null, 2));
process.exit(report.ok ? 0 : 1);
