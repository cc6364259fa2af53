"""Fat-tree fabric sizing: switch, cable and transceiver counts, bisection."""

from ibcalc.fabric.sizing import FabricSizing, size_fat_tree

__all__ = ["FabricSizing", "size_fat_tree"]
