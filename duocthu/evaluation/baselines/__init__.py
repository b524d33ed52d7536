"""Comparison baselines: the first version's phrase-rule understander, kept to measure against (notebook 07).

Nothing at run time imports this package; ``duocthu.evaluation.understanding`` builds the ``rules``
understander from it for the comparison rows.
"""
