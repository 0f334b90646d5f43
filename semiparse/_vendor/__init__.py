"""Third-party code kept unchanged, under its own licence.

``conll18_ud_eval.py``: the official scorer of the CoNLL 2018 shared task
(Zeman et al. 2018), version 1.2, by Milan Straka and Martin Popel (UFAL,
Charles University), Mozilla Public License 2.0 (see its header).  It is not
published on the package index; the packages there that score CoNLL 2018
metrics are re-implementations that differ from it (see docs/training.md).
"""
