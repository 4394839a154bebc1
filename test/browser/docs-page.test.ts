/**
 * The API reference page (`GET /docs`) in a real headless browser: Debian's Chromium driven by
 * playwright-core. The page loads without errors, shows every entity, asks nothing of any host
 * but the service, and its "Try it out" reads a record. A screenshot is kept under
 * test/output/browser/ for people to look at. Without Chromium (`CHROMIUM_PATH`, else
 * /usr/bin/chromium) the case is skipped, saying why, and fails under CI.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM, describeWith } from '../helpers/environment.js';
import { OUTPUT } from '../helpers/generate.js';
import { bootFixture, type BootedService } from '../helpers/service.js';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

describeWith(CHROMIUM, 'the API reference page in a browser', (executablePath) => {
  let service: BootedService;
  let browser: Browser;
  beforeAll(async () => {
    service = await bootFixture('shop', { folder: 'browser-docs' });
    const created = await service.request('POST', '/data/product', {
      body: { data: { code: 'p1', name: 'Hammer', price: '19.9' } },
    });
    expect(created.status).toBe(200);
    browser = await chromium.launch({ executablePath, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  // A browser's start and the page's first render take a while on a busy machine.
  it('shows every entity, calls nothing but the service, and tries a GET', {
    timeout: 120_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
    const errors: string[] = [];
    const requested: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('request', (request) => requested.push(request.url()));

    await page.goto(`${service.url}/docs`);
    await page.waitForSelector('.opblock-tag-section', { timeout: 20_000 });
    const tags = await page.locator('.opblock-tag').allTextContents();
    for (const entity of ['CATEGORY', 'PRODUCT', 'SHOP_SETTINGS'])
      expect(
        tags.some((tag) => tag.includes(entity)),
        entity,
      ).toBe(true);

    // "Try it out" on GET /data/product/{id}.
    const operation = page.locator('#operations-PRODUCT-getProduct');
    await operation.locator('.opblock-summary').click();
    // The page starts with "Try it out" switched on (tryItOutEnabled).
    await operation.locator('tr[data-param-name="id"] input').fill('p1');
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status');
    await expect.poll(() => status.first().textContent(), { timeout: 20_000 }).toContain('200');
    const body = await operation.locator('.live-responses-table').textContent();
    expect(body).toContain('Hammer');

    await mkdir(join(OUTPUT, 'browser'), { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'browser', 'docs.png'), fullPage: false });
    expect(errors).toEqual([]);
    const elsewhere = requested.filter((url) => !url.startsWith(service.url));
    expect(elsewhere).toEqual([]);
  });
});
