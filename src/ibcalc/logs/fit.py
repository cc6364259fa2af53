"""Bounded one-dimensional minimisation for fits that treat the cost model as a black box.

The checker and the calibrator fit a link's efficiency or latency by evaluating the model at
candidate values and minimising the squared log error against measured times. The model's time
is not smooth in those values everywhere (NCCL's algorithm and protocol choice switches), so a
local search could stop in the wrong valley: :func:`minimize_scalar` first scans a grid over the
whole interval, then refines the best bracket by Brent's method (parabolic steps, golden section
where they fail). It needs only
function values, so it keeps working whatever the model's formulas become.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Minimum", "minimize_scalar"]

_GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass(frozen=True)
class Minimum:
    """Where the minimum was found, its value, and how many evaluations it took."""

    x: float
    cost: float
    evaluations: int


def minimize_scalar(
    cost: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    grid: int = 25,
    log_scale: bool = False,
    rel_tol: float = 1e-4,
    max_iter: int = 80,
) -> Minimum:
    """Minimise ``cost`` over ``[lo, hi]``: a ``grid``-point scan (geometric when ``log_scale``,
    which needs ``lo > 0``), then Brent's method inside the neighbours of the best point until
    ``x`` is known to ``rel_tol`` of the interval (relative to ``x`` on a log scale).

    Infinite costs mark values the model refuses; if every point is infinite the result has an
    infinite cost.
    """
    if not lo < hi:
        raise ValueError("minimize_scalar needs lo < hi")
    if log_scale and lo <= 0:
        raise ValueError("a log-scale search needs lo > 0")
    evaluations = 0

    def f(x: float) -> float:
        nonlocal evaluations
        evaluations += 1
        value = cost(x)
        return value if math.isfinite(value) else math.inf

    if log_scale:
        step = (math.log(hi) - math.log(lo)) / (grid - 1)
        points = [math.exp(math.log(lo) + i * step) for i in range(grid)]
    else:
        points = [lo + (hi - lo) * i / (grid - 1) for i in range(grid)]
    values = [f(x) for x in points]
    best = min(range(grid), key=lambda i: values[i])
    if not math.isfinite(values[best]):
        return Minimum(points[best], math.inf, evaluations)
    a = points[max(best - 1, 0)]
    b = points[min(best + 1, grid - 1)]
    to_t: Callable[[float], float] = math.log if log_scale else (lambda x: x)
    from_t: Callable[[float], float] = math.exp if log_scale else (lambda x: x)
    # tolerance in the search coordinate: relative on a log scale, of the interval otherwise
    tol = rel_tol if log_scale else rel_tol * (hi - lo)
    tx, fx = _brent(lambda t: f(from_t(t)), to_t(a), to_t(b), tol, max_iter)
    if values[best] <= fx:
        return Minimum(points[best], values[best], evaluations)
    return Minimum(from_t(tx), fx, evaluations)


def _brent(
    f: Callable[[float], float], a: float, b: float, tol: float, max_iter: int
) -> tuple[float, float]:
    """Brent's minimisation on [a, b]: parabolic steps where the function looks quadratic,
    golden-section steps otherwise (Brent, *Algorithms for Minimization without Derivatives*,
    1973, ch. 5). ``tol`` is absolute, in the coordinate of ``a`` and ``b``."""
    golden = 1 - _GOLDEN  # 0.381966...
    x = w = v = a + golden * (b - a)
    fx = fw = fv = f(x)
    d = e = 0.0
    for _ in range(max_iter):
        m = 0.5 * (a + b)
        tol1 = tol + 1e-12
        tol2 = 2 * tol1
        if abs(x - m) <= tol2 - 0.5 * (b - a):
            break
        parabolic = False
        if abs(e) > tol1 and math.isfinite(fx) and math.isfinite(fw) and math.isfinite(fv):
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2 * (q - r)
            if q > 0:
                p = -p
            q = abs(q)
            if abs(p) < abs(0.5 * q * e) and q * (a - x) < p < q * (b - x):
                e, d = d, p / q
                u = x + d
                if u - a < tol2 or b - u < tol2:
                    d = math.copysign(tol1, m - x)
                parabolic = True
        if not parabolic:
            e = (a - x) if x >= m else (b - x)
            d = golden * e
        u = x + d if abs(d) >= tol1 else x + math.copysign(tol1, d)
        fu = f(u)
        if fu <= fx:
            if u >= x:
                a = x
            else:
                b = x
            v, w, x = w, x, u
            fv, fw, fx = fw, fx, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, w = w, u
                fv, fw = fw, fu
            elif fu <= fv or v in (x, w):
                v, fv = u, fu
    return x, fx
