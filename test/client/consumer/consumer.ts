// A project that uses a generated service's typed client (`src/client.ts`), compiled with
// `--strict` for a browser (no Node types) by test/client/client.test.ts, then run in Node
// against the live service. The `@ts-expect-error` lines must stay errors: a misspelt field or
// operator, or a value of the wrong type, does not compile.
import {
  createClient,
  EntityApiError,
  type productTypes,
} from '../../output/client-shop/src/client.js';

type Product = productTypes.Product;

export async function run(baseUrl: string): Promise<unknown> {
  const client = createClient({ baseUrl, headers: () => ({ 'X-Trace': 'consumer' }) });

  const inserted: Product = await client.product.insert({
    code: 'c1',
    name: 'Chisel',
    price: 12.5,
    tags: ['tools'],
  });
  const many: Product[] = await client.product.insert([
    { code: 'c2', name: 'Clamp', price: '7', stock: 3 },
    { code: 'c3', name: 'Crowbar', price: '30', status: 'active' },
  ]);
  const read = await client.product.get('c1');
  const cheap = await client.product.list({
    where: { price: { LT: 20 }, tags: { CONTAINS: 'tools' } },
    orderBy: ['-price', 'name'],
    limit: 10,
  });
  const named = await client.product.list({ where: { name: ['Clamp', 'Crowbar'] } });
  const count = await client.product.count({ where: { name: { STARTS_WITH: 'C' } } });
  const patched = await client.product.patch('c2', { stock: null, available: true });
  const removed = await client.product.remove('c3');
  await client.category.insert({ name: 'tools', description: 'Hand tools' });
  await client.product.insert({ code: 'l1', name: 'Level', price: 20, category: 'tools' });
  // `expand` embeds the category: its type is the CATEGORY record.
  const level = await client.product.get('l1', { expand: ['category'] });
  const description: string | undefined = level.category?.description;
  const levels = await client.product.list({ where: { name: 'Level' }, expand: ['category'] });
  // `fields` narrows the type to the selected fields; `filter` and `count` reach the service.
  const slim = await client.product.list({
    fields: ['code', 'name'],
    filter: 'name ~* "c" and price < 25',
    orderBy: ['code'],
    count: true,
    limit: 1,
  });
  const slimCode: string = slim.data[0]?.code ?? '';
  const withCategory = await client.product.get('l1', {
    fields: ['code', 'category.description'],
    expand: ['category'],
  });
  let missing: { status: number; reason: string } | undefined;
  try {
    await client.product.get('nope');
  } catch (error) {
    if (error instanceof EntityApiError) missing = { status: error.status, reason: error.reason };
  }
  let invalid: { status: number; paths: (string | number)[][] } | undefined;
  try {
    await client.product.insert({ code: 'bad', name: 'Bad', price: 'cheap' });
  } catch (error) {
    if (error instanceof EntityApiError)
      invalid = { status: error.status, paths: error.issues.map((issue) => [...issue.path]) };
  }
  // Upsert, changes by filter and a batch (SPEC §12).
  const upserted = await client.category.upsert(
    [
      { name: 'tools', description: 'Tools' },
      { name: 'toys', description: 'Toys' },
    ],
    { onConflict: 'merge' },
  );
  const restocked: Product[] = await client.product.patchWhere(
    { category: 'tools' },
    { stock: 9 },
    { maxAffected: 10 },
  );
  const [made, changed] = await client.batch((b) => [
    b.category.insert({ name: 'games' }),
    b.product.patch('l1', { stock: 1 }, { ifMatch: '"2"' }),
  ]);
  const madeName: string = made.data.name;
  const changedStock: number | undefined = changed.data.stock;
  let failedBatch: { status: number; operation: number | undefined } | undefined;
  try {
    await client.batch((b) => [b.category.insert({ name: 'cards' }), b.product.remove('nope')]);
  } catch (error) {
    if (error instanceof EntityApiError)
      failedBatch = { status: error.status, operation: error.operation };
  }
  const removedToys = await client.category.removeWhere({ name: 'toys' });
  const cards = await client.category.count({ where: { name: 'cards' } });
  return {
    bulk: {
      upserted: upserted.data,
      counts: [upserted.meta.created, upserted.meta.updated, upserted.meta.unchanged],
      restocked: restocked.map((product) => [product.code, product.stock]),
      batch: [madeName, changedStock, made.status],
      failedBatch,
      removedToys: removedToys.map((category) => category.name),
      cards,
    },
    inserted,
    many,
    read,
    cheap: cheap.data.map((product) => product.code),
    named: named.data.map((product) => product.code).sort(),
    count,
    patched,
    removed: removed.code,
    missing,
    invalid,
    expanded: { description, listed: levels.data.map((product) => product.category?.name) },
    selected: {
      data: slim.data,
      first: slimCode,
      count: slim.meta.count,
      withCategory,
      counted: await client.product.count({ filter: 'name ~* "LEV"' }),
      insensitive: (await client.product.list({ where: { name: { IEQUALS: 'LEVEL' } } })).data.map(
        (product) => product.code,
      ),
    },
  };
}

/** Lines that must not compile. */
export async function mistakes(baseUrl: string): Promise<void> {
  const client = createClient({ baseUrl });
  // @ts-expect-error: PRODUCT has no field `prise`
  await client.product.list({ where: { prise: 5 } });
  // @ts-expect-error: `GTT` is no operator
  await client.product.list({ where: { price: { GTT: 5 } } });
  // @ts-expect-error: `stock` is a number
  await client.product.list({ where: { stock: 'many' } });
  // @ts-expect-error: `available` takes only EQUALS and NOT_EQUALS
  await client.product.list({ where: { available: { GT: true } } });
  // @ts-expect-error: `status` is one of DRAFT, ACTIVE, RETIRED
  await client.product.list({ where: { status: 'SOLD' } });
  // @ts-expect-error: lists sort by fields of PRODUCT only
  await client.product.list({ orderBy: ['-prise'] });
  // @ts-expect-error: a record has no field `prise`
  await client.product.insert({ code: 'x', name: 'X', price: 1, prise: 2 });
  // @ts-expect-error: `name` is required
  await client.product.replace('x', { code: 'x', price: 1 });
  // @ts-expect-error: CATEGORY is no accessor of PRODUCT's, and `categorie` no accessor at all
  await client.categorie.list();
  // @ts-expect-error: `name` is no reference field, so it does not expand
  await client.product.get('x', { expand: ['name'] });
  const expanded = await client.product.get('x', { expand: ['category'] });
  // @ts-expect-error: an expanded category is a record, not its id
  const categoryId: string | undefined = expanded.category ?? undefined;
  void categoryId;
  // @ts-expect-error: onConflict is replace, merge or ignore
  await client.product.upsert({ code: 'x', name: 'X', price: 1 }, { onConflict: 'overwrite' });
  // @ts-expect-error: PRODUCT has no field `prise` to filter a change by
  await client.product.patchWhere({ prise: 1 }, { stock: 1 });
  const [one] = await client.batch((b) => [b.category.get('x')]);
  // @ts-expect-error: the result of a CATEGORY operation is a CATEGORY record
  const notProduct: string = one.data.code;
  void notProduct;
  const slim = await client.product.list({ fields: ['code', 'name'] });
  // @ts-expect-error: `price` was not selected
  void slim.data[0]?.price;
  // @ts-expect-error: PRODUCT has no field `prise` to select
  await client.product.list({ fields: ['prise'] });
  const product = await client.product.get('x');
  // @ts-expect-error: a stored DECIMAL is a string
  const price: number = product.price;
  void price;
}
