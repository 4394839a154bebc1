// Things named price that are not PRODUCT.price: only the two marked lines change.
import type { Offer } from '../entities/offer/types.js';
import type { Product } from '../entities/product/types.js';

/** An interface of the user's own. */
interface Quote {
  price: number;
}

/** A class with a property of the same name. */
class Label {
  price = 0;
  constructor(readonly text: string) {}
}

/** A local variable and a string of the same name. */
const price = 'price';

export function quote(product: Product, offer: Offer): Quote {
  const label = new Label(price);
  label.price = Number(offer.price);
  const loose: Record<string, unknown> = { price: label.price };
  return { price: Number(product.cost) + Number(loose[price]) }; // PRODUCT.price: renamed
}

export function cheapest(offers: readonly Offer[], product: Product): string {
  const prices = offers.map((offer) => offer.price);
  return [...prices, product.cost].sort()[0] ?? ''; // PRODUCT.price: renamed
}
