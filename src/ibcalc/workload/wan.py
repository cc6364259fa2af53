"""WAN latency from distance: light in fibre covers about 200 km per millisecond.

Silica fibre has a group index of about 1.47, so light travels at c / 1.47 = 2.04 x 10^8 m/s:
4.9 us per km, rounded to the "5 microsecond rule" network engineers use (5 us per km one way,
1 ms round trip per 100 km; mapyourtech.com, "The 5 microsecond rule", cited by the catalogue's
WAN entries). Routes are longer than great circles and equipment adds delay: give the measured
round trip (``--rtt``) when you have it.
"""

from __future__ import annotations

from ibcalc.errors import UnitError

__all__ = ["FIBRE_DELAY_S_PER_M", "one_way_latency"]

#: One-way propagation delay in fibre, seconds per metre (5 us per km).
FIBRE_DELAY_S_PER_M = 5e-9


def one_way_latency(*, distance_m: float | None = None, rtt_s: float | None = None) -> float | None:
    """One-way WAN latency from a fibre distance (5 us/km) or a round trip (half of it).

    Returns None when neither is given; refuses both at once (they could disagree).
    """
    if distance_m is not None and rtt_s is not None:
        raise UnitError("give a distance or a round-trip time, not both")
    if distance_m is not None:
        return distance_m * FIBRE_DELAY_S_PER_M
    if rtt_s is not None:
        return rtt_s / 2
    return None
