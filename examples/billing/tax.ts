/** VAT rates by product category, in percent. */
export const VAT_RATES: Record<string, number> = {
  food: 7,
  books: 7,
  default: 19,
};

export function vatRate(category: string): number {
  return VAT_RATES[category] ?? VAT_RATES.default ?? 19;
}

/** Tax on a net amount in cents, rounded half up to whole cents. */
export function taxFor(netCents: number, ratePercent: number): number {
  return Math.round((netCents * ratePercent) / 100);
}
