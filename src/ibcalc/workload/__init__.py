"""Workloads: the communication of a training step, of serving a model, and of a checkpoint.

``train.train_step``, ``infer.infer`` and ``checkpoint.checkpoint`` build :class:`~.phases.Phase`
lists from engine estimates on the sub-cluster each parallel group spans (``placement``); the
formulas and their sources are in docs/workload.md. The library never prints.
"""
