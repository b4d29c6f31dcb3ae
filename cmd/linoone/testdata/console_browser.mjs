// Drives `linoone console` in headless Chromium (Debian's /usr/bin/chromium through
// playwright-core) as an operator would: log in with the printed URL, shorten and
// read the short URL back from the clipboard, find the link by part of its target,
// see its QR code (its PNG decoded by the Go test), visit it in another
// tab and see today's bar, block it and see the resolver answer 410, unblock and
// see the 302 again, and try the used login URL and a cross-origin form. Every page
// gets a screenshot and an axe-core scan. Run by TestConsoleInBrowser
// (console_browser_test.go), which checks the report.
//
// Usage: node console_browser.mjs CONFIG_JSON
// CONFIG_JSON: {login, origin, target, landing, artifacts, axe, promiseMs}; landing
// is the host:port landing.example resolves to.
// Prints one JSON report on stdout; exits 1 only when the script itself fails.
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const axeSource = readFileSync(cfg.axe, 'utf8');
const today = new Date().toISOString().slice(0, 10);
const report = { pages: {}, consoleErrors: [], external: [], steps: [] };
const step = (s) => report.steps.push(s);

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--host-resolver-rules=MAP landing.example ${cfg.landing}`],
});
// A desktop browser's User-Agent: HeadlessChrome's would be read as a crawler's
// preview, not a visit.
const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

// landing.example resolves to the test's own server (--host-resolver-rules):
// nothing leaves the machine.
async function newContext(viewport) {
  const ctx = await browser.newContext({ userAgent: ua, viewport });
  ctx.on('request', (req) => {
    const u = new URL(req.url());
    if (!['127.0.0.1', 'landing.example'].includes(u.hostname) && !['data:', 'about:', 'blob:'].includes(u.protocol)) {
      report.external.push(req.url());
    }
  });
  return ctx;
}

// check screenshots the page and runs axe-core in it (evaluated through the
// DevTools protocol, which the page's CSP does not govern).
async function check(page, name) {
  const shot = join(cfg.artifacts, `console-${name}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  await page.evaluate(axeSource);
  const res = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  report.pages[name] = { url: page.url(), screenshot: shot, violations: res };
}

// visit opens a short URL in page: the resolver's status (302, or 404/410).
async function visit(page, shortURL) {
  const res = await page.goto(shortURL, { waitUntil: 'load' });
  const first = res.request().redirectedFrom();
  if (first) return (await first.response()).status();
  return res.status();
}

// waitFor tries fn until it holds, at most ms: how long after since the attempt
// that succeeded started (so the figure is not the attempt's own time), or -1.
async function waitFor(fn, ms, since = Date.now()) {
  for (;;) {
    const attempt = Date.now();
    if (await fn()) return attempt - since;
    if (Date.now() - since > ms) return -1;
    await new Promise((r) => setTimeout(r, 100));
  }
}

try {
  const ctx = await newContext({ width: 1280, height: 900 });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cfg.origin });
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') report.consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => report.consoleErrors.push(String(e)));
  page.on('dialog', (d) => d.accept());

  step('login');
  const login = await page.goto(cfg.login);
  report.loginStatus = login.status();
  report.afterLogin = page.url();

  step('shorten');
  await page.getByLabel('URL to shorten').fill(cfg.target);
  await page.keyboard.press('Tab'); // keyboard: to the Shorten button, and press it
  await page.keyboard.press('Enter');
  await page.waitForSelector('a.short-url');
  report.shortURL = await page.locator('a.short-url').first().innerText();
  await page.locator('button.copy').first().click();
  await page.locator('.copied', { hasText: 'Copied' }).first().waitFor();
  report.clipboard = await page.evaluate(() => navigator.clipboard.readText());
  report.token = report.shortURL.split('/').pop();
  await check(page, 'shorten');

  step('search');
  await page.goto(cfg.origin + '/links');
  await check(page, 'links');
  // By part of the target URL, as an operator remembers a link.
  report.searchTerm = new URL(cfg.target).pathname.slice(1);
  await page.getByLabel(/Search/).fill(report.searchTerm);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForLoadState('load');
  report.searchRows = await page.locator('#links tbody tr').count();
  report.searchFound = await page.locator(`#links a[href="/link/${report.token}"]`).count() === 1;
  report.searchURL = page.url();

  step('visit');
  const tab = await ctx.newPage();
  report.firstVisit = await visit(tab, report.shortURL);
  const linkURL = `${cfg.origin}/link/${report.token}`;
  report.barAfterMs = await waitFor(async () => {
    await page.goto(linkURL);
    const cell = page.locator(`#day-${today} td.visits`);
    // Stats reads visitors before clicks: wait for both to count the visit.
    return (await cell.count()) === 1 && (await cell.innerText()) === '1' &&
      (await page.locator('#unique-visitors').innerText()).startsWith('1 ');
  }, 20000);
  report.barSVG = await page.locator(`g[data-day="${today}"]`).getAttribute('data-visits');
  await check(page, 'link');

  step('qr');
  const img = page.locator('img#qr');
  await img.scrollIntoViewIfNeeded();
  report.qrShown = await img.evaluate((el) => el.complete && el.naturalWidth > 0);
  const png = await page.request.get(`${linkURL}/qr?format=png&size=512&download=1`);
  report.qrPNG = (await png.body()).toString('base64');
  report.qrDisposition = png.headers()['content-disposition'] ?? '';
  report.uniqueVisitors = await page.locator('#unique-visitors').innerText();
  report.browsers = await page.locator('#browsers tbody').innerText();

  step('block');
  await page.getByRole('link', { name: 'Block…' }).click();
  report.blockConfirm = await page.locator('form.confirm p').innerText();
  await page.getByRole('button', { name: 'Yes, block' }).click();
  await page.waitForSelector('p.notice');
  const blockedAt = Date.now();
  report.blockNotice = await page.locator('p.notice').innerText();
  report.blockBadge = await page.locator('#blocked').innerText();
  report.goneAfterMs = await waitFor(async () => (await visit(tab, report.shortURL)) === 410, cfg.promiseMs + 3000, blockedAt);
  await check(page, 'link-blocked');
  await tab.screenshot({ path: join(cfg.artifacts, 'console-resolver-410.png') });

  step('denylist');
  await page.goto(cfg.origin + '/denylist');
  report.denyRules = await page.locator('tbody tr').count();
  await check(page, 'denylist');

  step('unblock');
  await page.goto(linkURL);
  await page.getByRole('link', { name: 'Unblock…' }).click();
  await page.getByRole('button', { name: 'Yes, unblock' }).click();
  await page.waitForSelector('p.notice');
  const unblockedAt = Date.now();
  report.unblockNotice = await page.locator('p.notice').innerText();
  report.backAfterMs = await waitFor(async () => (await visit(tab, report.shortURL)) === 302, cfg.promiseMs + 3000, unblockedAt);

  step('health');
  await page.goto(cfg.origin + '/health');
  report.health = await page.locator('dl.facts').innerText();
  await check(page, 'health');

  step('phone');
  await page.setViewportSize({ width: 375, height: 740 });
  await page.goto(linkURL);
  report.phoneOverflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  await check(page, 'link-phone');

  step('cross-origin form');
  await page.goto(cfg.origin + '/');
  const csrf = await page.locator('input[name="csrf"]').first().inputValue();
  const attack = await ctx.newPage();
  await attack.goto('http://landing.example/attack?csrf=' + encodeURIComponent(csrf));
  const [res] = await Promise.all([attack.waitForNavigation(), attack.getByRole('button', { name: 'go' }).click()]);
  report.crossOriginStatus = res ? res.status() : 0;
  report.crossOriginText = await attack.locator('body').innerText();

  step('second login');
  const other = await newContext({ width: 1280, height: 900 });
  const again = await other.newPage();
  const second = await again.goto(cfg.login);
  report.secondLoginStatus = second.status();
  report.secondLoginText = await again.locator('#refusal').innerText();
  await check(again, 'login-refused');
  step('done');
} catch (e) {
  report.error = String(e.stack ?? e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report, null, 2));
process.exit(report.error ? 1 : 0);
