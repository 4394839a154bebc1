/**
 * The admin web app (`GET /admin`, docs/admin.md) in headless Chromium, on the shop fixture with
 * its access rules: an editor signs in with an API key, creates a category and a product through
 * the forms (text, numbers, checkbox, date, date-time, enum, select, reference picker, object,
 * list, key/value rows, image upload, JSON), sees the server's validation errors beside their
 * fields, sorts, filters and pages 250 products, loses an edit race (412, explained, reload) and
 * is offered no delete; an admin deletes with confirmation and sees a record created through the
 * API appear in the open list. axe-core finds no serious accessibility violation, the page runs
 * under the service's Content-Security-Policy and calls no other host. Screenshots go to
 * test/output/browser/.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Authenticator } from '@entity-gen/runtime';
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

const EDITOR_KEY = 'editor-key-0123456789abcdef';
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const JWT_SECRET = 'a-test-secret-that-is-long-enough-for-hs256';
const SHOTS = join(OUTPUT, 'browser');
/** A 1×1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

function authenticator(): Authenticator {
  const key = (name: string, value: string, roles: string[]) => ({
    name,
    sha256: createHash('sha256').update(value).digest(),
    roles,
  });
  return new Authenticator({
    jwt: {
      key: { kind: 'secret', secret: new TextEncoder().encode(JWT_SECRET) },
      rolesClaim: 'roles',
      clockToleranceSeconds: 0,
    },
    apiKeys: [key('editor', EDITOR_KEY, ['editor']), key('admin', ADMIN_KEY, ['admin'])],
  });
}

/** Serious and critical violations of axe-core's rules on the page as it is. */
async function seriousViolations(page: Page): Promise<string[]> {
  const source = await readFile(
    createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
    'utf8',
  );
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays in force.
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    // Runs in the page (no DOM types here): axe-core's global and the document.
    const inPage = globalThis as unknown as {
      axe: { run: (context: unknown) => Promise<AxeResults> };
      document: unknown;
    };
    const results = await inPage.axe.run(inPage.document);
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
      );
  });
  return violations;
}

/**
 * `expect.poll` with room for a busy machine: each step waits for the page up to 15 s (the
 * default is 1 s), and passes as soon as the page shows what is expected.
 */
function poll<T>(read: () => T | Promise<T>) {
  return expect.poll(read, { timeout: 15_000 });
}

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
}

describeWith(CHROMIUM, 'the admin app in a browser', (executablePath) => {
  let service: BootedService;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const requested: string[] = [];
  const admin = { 'X-API-Key': ADMIN_KEY };

  beforeAll(async () => {
    service = await bootFixture(
      {
        name: 'shop-access',
        schemas: ['fixtures/shop/shop.yaml'],
        access: 'fixtures/shop/access.yaml',
      },
      { folder: 'browser-admin', auth: authenticator() },
    );
    const products = Array.from({ length: 250 }, (_, index) => ({
      code: `p${String(index + 1).padStart(3, '0')}`,
      name: `Product ${index + 1}`,
      price: String(index + 1),
      status: ['DRAFT', 'ACTIVE', 'RETIRED'][index % 3],
      stock: (index * 7) % 40,
      weightKg: 0.5 + (index % 8) / 4,
      available: index % 4 !== 0,
      releaseDate: `2026-${String(1 + (index % 12)).padStart(2, '0')}-${String(1 + (index % 28)).padStart(2, '0')}`,
      size: ['S', 'M', 'L'][index % 3],
      tags: index % 5 === 0 ? ['sale'] : [],
    }));
    const seeded = await service.request('POST', '/data/product', {
      body: { data: products },
      headers: admin,
    });
    expect(seeded.status).toBe(200);
    browser = await chromium.launch({ executablePath, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The browser logs the answers the test provokes: the 400 of the invalid form, the 412,
      // the 401 of a wrong key.
      const provoked = /^Failed to load resource: .* status of (400|401|412) /.test(message.text());
      if (message.type() === 'error' && !provoked) errors.push(message.text());
    });
    page.on('request', (request) => requested.push(request.url()));
    await mkdir(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  const rowCodes = () => page.locator('tbody tr td:first-child').allTextContents();

  async function signIn(key: string, subject: string, kind = 'apiKey'): Promise<void> {
    await page.getByLabel('Credential').selectOption(kind);
    await page.getByLabel('Token or key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.locator('.signin').textContent()).toContain(`Signed in as ${subject}`);
  }

  it('serves the app under its policy with long-lived files', { timeout: 60_000 }, async () => {
    const response = await fetch(`${service.url}/admin`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await response.text();
    const script = html.match(/src="(\/admin\/app-[0-9a-f]+\.js)"/)?.[1];
    expect(script).toBeDefined();
    const file = await fetch(`${service.url}${script}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('signs an editor in with an API key', { timeout: 60_000 }, async () => {
    await page.goto(`${service.url}/admin`);
    await poll(() => page.getByRole('link', { name: 'Product' }).count()).toBe(1);
    expect(await page.title()).toMatch(/ · Admin$/);
    // The service has access rules: no warning that everything is public.
    expect(await page.locator('.warning').count()).toBe(0);
    // A key that does not verify is refused and not kept.
    await page.getByLabel('Credential').selectOption('apiKey');
    await page.getByLabel('Token or key').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await poll(() => page.getByRole('alert').textContent()).toBe(
      'Signing in failed: Authentication required',
    );
    expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(1);
    // The message stays while the app goes on as an anonymous caller.
    await poll(() => page.getByRole('link', { name: 'Product' }).count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toBe(
      'Signing in failed: Authentication required',
    );
    await signIn(EDITOR_KEY, 'editor');
    expect(await page.locator('.signin').textContent()).toContain('(editor)');
    expect(await page.getByRole('alert').count()).toBe(0);
    // The credential is kept for the browser session only.
    const stored = await page.evaluate(() =>
      (
        globalThis as unknown as { sessionStorage: { getItem: (key: string) => string | null } }
      ).sessionStorage.getItem('entity-gen-admin-credential'),
    );
    expect(stored).toContain(EDITOR_KEY);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('creates a category through its form', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Category', exact: true }).click();
    await page.getByRole('link', { name: 'New Category' }).click();
    await page.locator('#f-name').fill('garden');
    await page.locator('#f-description').fill('Plants and tools');
    await page.getByRole('button', { name: 'Create' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Category garden');
    const stored = await service.request('GET', '/data/category/garden');
    expect(stored.body).toMatchObject({
      data: { name: 'garden', description: 'Plants and tools' },
    });
  });

  it('keeps quick edits that land between a render and its effects', {
    timeout: 60_000,
  }, async () => {
    // Under load, edits come faster than Preact runs a component's effects (after the next
    // paint, or at the start of its next render): each edit must build on the form as the last
    // render left it, not on what a late effect brings back.
    await page.getByRole('link', { name: 'Category', exact: true }).click();
    await page.getByRole('link', { name: 'New Category' }).click();
    await poll(() => page.locator('#f-name').count()).toBe(1);
    await page.evaluate(async () => {
      // Runs in the page (no DOM types here): the document and the Event constructor.
      interface Input {
        value: string;
        dispatchEvent: (event: unknown) => boolean;
      }
      const inPage = globalThis as unknown as {
        document: { getElementById: (id: string) => Input };
        Event: new (type: string, init: { bubbles: boolean }) => unknown;
      };
      const type = (id: string, value: string): void => {
        const input = inPage.document.getElementById(id);
        input.value = value;
        input.dispatchEvent(new inPage.Event('input', { bubbles: true }));
      };
      // A task boundary lets the render of the edit before run; the paint, and the effects
      // waiting for it, come later.
      const rendered = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
      type('f-name', 'quick');
      await rendered();
      type('f-description', 'kept');
      await rendered();
      type('f-name', 'quicker');
    });
    await page.getByRole('button', { name: 'Create' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Category quicker');
    const stored = await service.request('GET', '/data/category/quicker');
    expect(stored.body).toMatchObject({ data: { name: 'quicker', description: 'kept' } });
  });

  it('creates a product with every kind of control, showing server errors beside their fields', {
    timeout: 90_000,
  }, async () => {
    await page.getByRole('link', { name: 'Product', exact: true }).click();
    await page.getByRole('link', { name: 'New Product' }).click();
    await page.locator('#f-code').fill('x1');
    await page.locator('#f-price').fill('abc');
    // The number control says so at once; the server says so too when the form is sent.
    await poll(() => page.locator('#f-price-hint').textContent()).toBe('Enter a decimal number');
    await page.getByRole('button', { name: 'Create' }).click();
    await poll(() => page.locator('#f-price-error').textContent()).toContain(
      'Unable to convert field price - DECIMAL - for value "abc"',
    );
    expect(await page.locator('#f-name-error').textContent()).toContain('Field name is required');
    expect(await page.locator('#f-name').getAttribute('aria-invalid')).toBe('true');
    await page.screenshot({
      path: join(SHOTS, 'admin-form-errors.png'),
      clip: { x: 0, y: 0, width: 1000, height: 640 },
    });
    expect(await seriousViolations(page)).toEqual([]);

    await page.locator('#f-name').fill('Garden hose');
    await page.locator('#f-price').fill('24.90');
    // The reference picker searches the categories; chosen with the keyboard.
    await page.locator('#f-category').fill('gar');
    await poll(() => page.getByRole('option', { name: 'garden' }).count()).toBe(1);
    await page.locator('#f-category').press('ArrowDown');
    await page.locator('#f-category').press('Enter');
    expect(await page.locator('#f-category').inputValue()).toBe('garden');
    expect(await page.getByRole('listbox').isHidden()).toBe(true);
    await page.locator('#f-stock').fill('12');
    await page.locator('#f-weightKg').fill('1.5');
    await page.getByLabel('available').check();
    await page.locator('#f-releaseDate').fill('2026-04-01');
    await page.locator('#f-lastRestock').fill('2026-03-01T10:30');
    await page.locator('#f-status').selectOption('ACTIVE');
    await page.locator('#f-size').selectOption('M');
    await page.locator('#f-dimensions-width').fill('20');
    await page.locator('#f-dimensions-height').fill('15');
    await page.locator('#f-dimensions-unit').selectOption('cm');
    await page.getByRole('button', { name: 'Add to tags' }).click();
    await page.locator('#f-tags-0').fill('garden');
    await page.getByRole('button', { name: 'Add to tags' }).click();
    await page.locator('#f-tags-1').fill('water');
    await page.getByRole('button', { name: 'Add to variants' }).click();
    await page.locator('#f-variants-0-sku').fill('x1-green');
    await page.getByRole('button', { name: 'Add entry to prices' }).click();
    await page.locator('#f-prices-key-0').fill('EUR');
    await page.locator('#f-prices-EUR-amount').fill('24.90');
    await page.locator('#f-image').setInputFiles({
      name: 'pixel.png',
      mimeType: 'image/png',
      buffer: PIXEL,
    });
    await poll(() => page.getByAltText('image preview').count()).toBe(1);
    await page.locator('#f-attributes').fill('{"material": "rubber"}');
    await page.screenshot({ path: join(SHOTS, 'admin-form.png'), fullPage: true });
    await page.getByRole('button', { name: 'Create' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Product x1');
    // The record view links the referenced category.
    expect(await page.getByRole('link', { name: 'garden' }).getAttribute('href')).toBe(
      '#/CATEGORY/r/garden',
    );

    const stored = await service.request('GET', '/data/product/x1');
    expect(stored.body).toMatchObject({
      data: {
        code: 'x1',
        name: 'Garden hose',
        category: 'garden',
        price: '24.9',
        stock: 12,
        weightKg: 1.5,
        available: true,
        releaseDate: '2026-04-01',
        status: 'ACTIVE',
        size: 'M',
        dimensions: { width: 20, height: 15, unit: 'cm' },
        tags: ['garden', 'water'],
        variants: [{ sku: 'x1-green' }],
        prices: { EUR: { amount: '24.9' } },
        image: `data:image/png;base64,${PIXEL.toString('base64')}`,
        attributes: { material: 'rubber' },
      },
    });
    const data = (stored.body as { data: { lastRestock: string } }).data;
    expect(data.lastRestock).toMatch(/^2026-03-01T\d\d:30:00\.000Z$/);
  });

  it('keeps every value an edit does not change', { timeout: 60_000 }, async () => {
    const before = await service.request('GET', '/data/product/x1');
    await page.goto(`${service.url}/admin#/PRODUCT/r/x1/edit`);
    await poll(() => page.locator('#f-stock').inputValue()).toBe('12');
    await page.locator('#f-stock').fill('13');
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Product x1');
    const after = await service.request('GET', '/data/product/x1');
    const { data } = before.body as { data: Record<string, unknown> };
    expect((after.body as { data: unknown }).data).toEqual({ ...data, stock: 13 });
  });

  it('sorts, filters and pages 250 products, with their count', { timeout: 90_000 }, async () => {
    await page.getByRole('link', { name: 'Product', exact: true }).click();
    const status = page.getByRole('status');
    await poll(() => status.textContent()).toContain('251 records');
    expect(await rowCodes()).toHaveLength(25);
    expect((await rowCodes())[0]).toBe('p001');

    await page.getByRole('button', { name: 'Next page' }).click();
    await poll(async () => (await rowCodes())[0]).toBe('p026');
    expect(await page.locator('.pager').textContent()).toContain('Page 2');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await poll(async () => (await rowCodes())[0]).toBe('p001');

    // Sorting by a header works from the keyboard.
    await page.getByRole('button', { name: 'price', exact: true }).focus();
    await page.keyboard.press('Enter');
    await poll(async () => (await rowCodes())[0]).toBe('p001');
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('ascending');
    await page.getByRole('button', { name: 'price', exact: true }).click();
    await poll(async () => (await rowCodes())[0]).toBe('p250');
    // Cursor paging keeps the order.
    await page.getByRole('button', { name: 'Next page' }).click();
    await poll(async () => (await rowCodes())[0]).toBe('p225');

    await page.getByLabel('Filter on').selectOption('name');
    await page.getByLabel('Operator').selectOption('CONTAINS');
    await page.getByLabel('Value').fill('Product 12');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await poll(() => status.textContent()).toContain('11 records');
    expect(await rowCodes()).toEqual([
      'p129',
      'p128',
      'p127',
      'p126',
      'p125',
      'p124',
      'p123',
      'p122',
      'p121',
      'p120',
      'p012',
    ]);
    await page.screenshot({
      path: join(SHOTS, 'admin-list.png'),
      clip: { x: 0, y: 0, width: 1100, height: 560 },
    });
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Remove filter name CONTAINS Product 12' }).click();
    await poll(() => status.textContent()).toContain('251 records');
    // Columns can be hidden.
    await page.getByText('Columns').click();
    await page.getByLabel('stock', { exact: true }).uncheck();
    await poll(() => page.getByRole('columnheader', { name: 'stock', exact: true }).count()).toBe(
      0,
    );
    await page.getByLabel('stock', { exact: true }).check();
    await poll(() => page.getByRole('columnheader', { name: 'stock', exact: true }).count()).toBe(
      1,
    );
  });

  it('explains a lost edit race (412) and reloads the record', { timeout: 60_000 }, async () => {
    await page.goto(`${service.url}/admin#/PRODUCT/r/p003/edit`);
    await poll(() => page.locator('#f-name').inputValue()).toBe('Product 3');
    const changed = await service.request('PATCH', '/data/product/p003', {
      body: { data: { name: 'Changed elsewhere' } },
      headers: admin,
    });
    expect(changed.status).toBe(200);
    await page.locator('#f-stock').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await poll(() => alert.textContent()).toContain('Someone else changed this record');
    expect(await alert.textContent()).toContain('412');
    await page.getByRole('button', { name: 'Reload the record' }).click();
    await poll(() => page.locator('#f-name').inputValue()).toBe('Changed elsewhere');
    await page.locator('#f-stock').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Product p003');
    const stored = await service.request('GET', '/data/product/p003');
    expect(stored.body).toMatchObject({
      data: { name: 'Changed elsewhere', stock: 7, price: '3', status: 'RETIRED' },
    });
  });

  it('offers no delete to an editor', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'Product', exact: true }).click();
    await poll(async () => (await rowCodes())[0]).toBe('p001');
    expect(await page.getByRole('button', { name: 'Delete p001' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Edit p001' }).count()).toBe(1);
  });

  it('lets an admin delete after confirming', { timeout: 60_000 }, async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    // The admin signs in with a bearer token (a JWT).
    const jwt = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ops')
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(JWT_SECRET));
    await signIn(jwt, 'ops', 'bearer');
    await page.getByRole('link', { name: 'Product', exact: true }).click();
    await poll(async () => (await rowCodes())[1]).toBe('p002');
    await page.getByRole('button', { name: 'Delete p002' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('cannot be undone');
    expect(await seriousViolations(page)).toEqual([]);
    // Cancelling keeps the record.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await service.request('GET', '/data/product/p002')).status).toBe(200);
    await page.getByRole('button', { name: 'Delete p002' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await poll(async () => (await rowCodes())[1]).toBe('p003');
    expect((await service.request('GET', '/data/product/p002')).status).toBe(404);
  });

  it('shows a record created through the API in the open list', { timeout: 60_000 }, async () => {
    // The list follows /events once its stream is open.
    await poll(async () =>
      (await page.getByRole('status').textContent())?.includes('not live'),
    ).toBe(false);
    const created = await service.request('POST', '/data/product', {
      body: { data: { code: 'a-live', name: 'Arrived live', price: '5' } },
      headers: admin,
    });
    expect(created.status).toBe(200);
    await poll(async () => (await rowCodes())[0]).toBe('a-live');
  });

  it('ran without errors, under its policy, calling only the service', () => {
    expect(errors).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(service.url))).toEqual([]);
  });
});

describeWith(CHROMIUM, 'the admin app of a service without access rules', (executablePath) => {
  let service: BootedService;
  let browser: Browser;
  beforeAll(async () => {
    service = await bootFixture('shop', { folder: 'browser-admin-open' });
    browser = await chromium.launch({ executablePath, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('warns that everything is public and offers every action', { timeout: 60_000 }, async () => {
    await service.request('POST', '/data/category', { body: { data: { name: 'tools' } } });
    const page = await browser.newPage();
    await page.goto(`${service.url}/admin#/CATEGORY`);
    await poll(() => page.getByRole('note').textContent()).toContain(
      'This service has no access rules: everything is public',
    );
    await poll(() => page.getByRole('button', { name: 'Delete tools' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'New Category' }).count()).toBe(1);
  });
});

describeWith(CHROMIUM, 'the admin app on references to integer keys', (executablePath) => {
  let service: BootedService;
  let browser: Browser;
  beforeAll(async () => {
    service = await bootFixture('integer-key', { folder: 'browser-admin-integer' });
    const customers = await service.request('POST', '/data/customer', {
      body: {
        data: [
          { id: 1, name: 'Alice' },
          { id: 2, name: 'Bob' },
        ],
      },
    });
    expect(customers.status).toBe(200);
    browser = await chromium.launch({ executablePath, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('picks a customer by name and shows its name in the list of invoices', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage();
    await page.goto(`${service.url}/admin#/INVOICE/new`);
    await page.locator('#f-number').fill('100');
    await page.locator('#f-customer').fill('Bo');
    await poll(() => page.getByRole('option', { name: 'Bob (2)' }).count()).toBe(1);
    await page.getByRole('option', { name: 'Bob (2)' }).click();
    await page.locator('#f-total').fill('12.50');
    await page.locator('#f-issuedOn').fill('2026-05-04');
    await page.getByRole('button', { name: 'Create' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('INVOICE 100');
    // The reference is stored as the integer key.
    const stored = await service.request('GET', '/data/invoice/100');
    expect(stored.body).toMatchObject({ data: { number: 100, customer: 2, total: '12.5' } });
    await page.getByRole('link', { name: 'INVOICE', exact: true }).click();
    // The list shows the customer's name, linked to the customer.
    const cell = page.getByRole('link', { name: 'Bob', exact: true });
    await poll(() => cell.count()).toBe(1);
    expect(await cell.getAttribute('href')).toBe('#/CUSTOMER/r/2');
  });
});

describeWith(CHROMIUM, 'the admin app under a REST configuration', (executablePath) => {
  let service: BootedService;
  let browser: Browser;
  beforeAll(async () => {
    // With change events off (EVENTS=off): the list works, and says it is not live.
    service = await bootFixture('shop-rest', { folder: 'browser-admin-rest', eventsOff: true });
    const products = Array.from({ length: 12 }, (_, index) => ({
      code: `r${String(index + 1).padStart(2, '0')}`,
      name: `Item ${index + 1}`,
      price: String(100 - index),
    }));
    expect(
      (await service.request('POST', '/data/product', { body: { data: products } })).status,
    ).toBe(200);
    expect(
      (await service.request('POST', '/data/category', { body: { data: { name: 'tools' } } }))
        .status,
    ).toBe(200);
    browser = await chromium.launch({ executablePath, args: FLAGS });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('pages within maxWindow, sorts only the allowed fields and opens unlisted entities by id', {
    timeout: 60_000,
  }, async () => {
    const page = await browser.newPage();
    await page.goto(`${service.url}/admin#/PRODUCT`);
    const codes = () => page.locator('tbody tr td:first-child').allTextContents();
    // maxWindow 5: pages of 5, followed by cursor.
    await poll(async () => (await codes()).length).toBe(5);
    expect(await page.getByLabel('Per page').inputValue()).toBe('5');
    expect(await page.getByRole('status').textContent()).toContain('not live');
    await page.getByRole('button', { name: 'Next page' }).click();
    await poll(async () => (await codes())[0]).toBe('r06');
    await page.getByRole('button', { name: 'Next page' }).click();
    await poll(async () => await codes()).toEqual(['r11', 'r12']);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    // allowedOrderingFields: [name, price]
    expect(await page.getByRole('button', { name: 'price', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'stock', exact: true }).count()).toBe(0);
    // CATEGORY allows GET_BYID and NEW only: no list, a way to open a record by id.
    await page.getByRole('link', { name: 'Category', exact: true }).click();
    await page.getByLabel('Open the record with id').fill('tools');
    await page.getByRole('button', { name: 'Open' }).click();
    await poll(() => page.locator('h1').textContent()).toBe('Category tools');
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
  });
});
