/** An amount of money in minor units (cents), never a float. */
export interface Money {
  cents: number;
  currency: string;
}

export function money(cents: number, currency = "EUR"): Money {
  if (!Number.isInteger(cents)) throw new Error(`cents must be an integer, got ${cents}`);
  return { cents, currency };
}

/** Parses "12.34" or "12,34 EUR" into a Money amount. */
export function parseMoney(text: string, currency = "EUR"): Money {
  const match = /^\s*(-?\d+)(?:[.,](\d{1,2}))?\s*([A-Z]{3})?\s*$/.exec(text);
  if (!match) throw new Error(`not an amount: ${text}`);
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? "0").padEnd(2, "0"));
  return money(whole * 100 + Math.sign(whole || 1) * fraction, match[3] ?? currency);
}

export function addMoney(a: Money, b: Money): Money {
  if (a.currency !== b.currency) throw new Error(`currency mismatch: ${a.currency} vs ${b.currency}`);
  return money(a.cents + b.cents, a.currency);
}

export function formatMoney(amount: Money): string {
  const sign = amount.cents < 0 ? "-" : "";
  const abs = Math.abs(amount.cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")} ${amount.currency}`;
}
