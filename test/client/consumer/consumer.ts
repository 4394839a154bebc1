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
  return {
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
  const product = await client.product.get('x');
  // @ts-expect-error: a stored DECIMAL is a string
  const price: number = product.price;
  void price;
}
