"""Stock keeping for the corner shop."""

from .stock import OutOfStock, Stock

__all__ = ["OutOfStock", "Stock"]
