"""Stock levels per SKU, with reservations for open orders."""

from dataclasses import dataclass, field


class OutOfStock(Exception):
    """Raised when an order asks for more than is on hand."""

    def __init__(self, sku: str):
        super().__init__(f"out of stock: {sku}")
        self.sku = sku


@dataclass
class Stock:
    on_hand: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)

    def available(self, sku: str) -> int:
        return self.on_hand.get(sku, 0) - self.reserved.get(sku, 0)

    def reserve(self, sku: str, quantity: int) -> None:
        """Reserves `quantity` units for an order; everything on hand may be reserved.

        >>> stock = Stock(on_hand={"apple": 3})
        >>> try:
        ...     stock.reserve("apple", 3)
        ... except OutOfStock:
        ...     print("refused")
        >>> stock.available("apple")
        0
        """
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if self.available(sku) <= quantity:
            raise OutOfStock(sku)
        self.reserved[sku] = self.reserved.get(sku, 0) + quantity

    def release(self, sku: str, quantity: int) -> None:
        self.reserved[sku] = max(0, self.reserved.get(sku, 0) - quantity)

    def restock(self, sku: str, quantity: int) -> None:
        self.on_hand[sku] = self.on_hand.get(sku, 0) + quantity
