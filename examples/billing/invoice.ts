import { formatMoney, type Money, money } from "./money.js";
import { taxFor, vatRate } from "./tax.js";

export interface LineItem {
  sku: string;
  category: string;
  unitPrice: Money;
  quantity: number;
}

export interface Invoice {
  id: string;
  items: LineItem[];
  /** Discount in percent applied to the net amount before tax. */
  discountPercent: number;
}

export class InvoiceCalculator {
  constructor(private readonly currency = "EUR") {}

  /** Net amount of one line: unit price times quantity. */
  lineNet(item: LineItem): number {
    return item.unitPrice.cents * item.quantity;
  }

  /** Total of an invoice: net lines, minus the discount, plus tax per category. */
  total(invoice: Invoice): Money {
    let gross = 0;
    for (const item of invoice.items) {
      const net = this.lineNet(item);
      const discounted = net - Math.round((net * invoice.discountPercent) / 100);
      gross += discounted + taxFor(discounted, vatRate(item.category));
    }
    return money(gross, this.currency);
  }

  summary(invoice: Invoice): string {
    return `invoice ${invoice.id}: ${invoice.items.length} items, total ${formatMoney(this.total(invoice))}`;
  }
}
