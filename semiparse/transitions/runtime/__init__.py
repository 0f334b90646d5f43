"""The C runtime of every transition system: one configuration state
(``_state.pxd``), the compiled machine that runs a system's moves on it
(``_machine``; LR-spine's moves in ``_lr_spine_moves``), the public
``Configuration`` and the oracle rows (``_configuration``), and the C
acceptance test of configurations (``_validation``)."""
