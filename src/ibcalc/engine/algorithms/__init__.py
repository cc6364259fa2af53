"""One module per algorithm family.

Ring, tree, in-network (NVLS, SHARP), recursive, hierarchical, all-to-all and send/recv. Each cost
function takes (collective, size, topology, protocol, params) and returns a
:class:`~ibcalc.engine.types.Cost`, or None when it does not apply; ``params`` is the
:class:`~ibcalc.engine.params.CostParams` to cost with (the physical values, or the tuner view).
"""
