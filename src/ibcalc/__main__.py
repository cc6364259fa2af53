"""``python -m ibcalc``."""

from ibcalc.cli import main

main()
