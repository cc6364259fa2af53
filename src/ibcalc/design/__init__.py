"""Cluster-design files: their schema and the checks `ibcalc check` runs."""

from ibcalc.design.check import check_design, load_design

__all__ = ["check_design", "load_design"]
