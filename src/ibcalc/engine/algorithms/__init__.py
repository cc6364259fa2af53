"""One module per algorithm family.

Ring, tree, in-network (NVLS, SHARP), recursive, hierarchical, all-to-all and send/recv. Each cost
function takes (collective, size, topology, protocol) and returns a
:class:`~ibcalc.engine.types.Cost`, or None when it does not apply.
"""
