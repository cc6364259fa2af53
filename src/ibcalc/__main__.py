"""``python -m ibcalc`` and the ``ibcalc`` console script.

The entry point imports the command line inside its own frame, so that Ctrl-C during the 0.1-0.2 s
of imports exits 130 quietly, as it does later; it had printed a 30-line traceback (review EC 5).
The first ~50 ms stay Python's: its own start-up, and ``ibcalc/__init__``'s import of typing,
which runs before this module (review EE 7).
"""

from __future__ import annotations


def main() -> None:
    """Import the command line, then run it."""
    try:
        from ibcalc.cli import main as run
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
