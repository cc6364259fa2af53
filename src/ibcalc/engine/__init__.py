"""The analytic collective-cost engine: pure functions of numbers (no I/O, no catalogue, no YAML).

``types`` holds the value types, ``base`` the tiered topology and shared terms, ``algorithms``
one module per algorithm family, ``select`` NCCL's choice among them.
"""
