// Logs in to `linoone console` in headless Chromium (Debian's /usr/bin/chromium
// through playwright-core), opens one link's page at a fixed 1200×800 viewport and
// screenshots its figures, QR code and chart of clicks per day. Run by
// TestConsoleLinkScreenshot (console_screenshot_test.go), which checks the report.
//
// Usage: node console_screenshot.mjs CONFIG_JSON
// CONFIG_JSON: {login, origin, token, shot}
// Prints one JSON report on stdout; exits 1 only when the script itself fails.
import { chromium } from 'playwright-core';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const report = {};
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--font-render-hinting=none', '--hide-scrollbars'],
});
try {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 800 }, deviceScaleFactor: 1, colorScheme: 'light' });
  const page = await ctx.newPage();
  await page.goto(cfg.login);
  await page.goto(`${cfg.origin}/link/${cfg.token}`, { waitUntil: 'load' });
  await page.locator('img#qr').evaluate((el) => el.decode());
  report.clicks = await page.locator('#clicks').innerText();
  report.unique = await page.locator('#unique-visitors').innerText();
  report.browsers = await page.locator('#browsers tbody').innerText();
  report.days = await page.locator('[id^="day-"]').count();
  // The view ends just under the clicks-per-day chart: the link's figures, its QR
  // code, Block and the chart in one screen, below the header (which names a
  // temporary data dir).
  const view = await page.evaluate(() => {
    const h = [...document.querySelectorAll('h2')].find((e) => e.textContent === 'Clicks per day');
    if (!h) return { bottom: 0, top: 0 };
    const bottom = h.nextElementSibling.getBoundingClientRect().bottom + window.scrollY;
    // Start at the first of the link's facts that lets the chart end in view.
    const dt = [...document.querySelectorAll('dl.facts dt')]
      .map((e) => e.getBoundingClientRect().top + window.scrollY - 12)
      .find((y) => y >= bottom + 24 - 800);
    return { bottom, top: dt ?? Math.max(0, bottom + 24 - 800) };
  });
  report.chartBottom = Math.round(view.bottom);
  await page.evaluate((y) => window.scrollTo(0, y), Math.round(view.top));
  await page.screenshot({ path: cfg.shot });
} catch (e) {
  report.error = String(e.stack ?? e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(report));
process.exit(report.error ? 1 : 0);
