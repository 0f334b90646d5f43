"""The oracle of the LR-spine system (:mod:`semiparse.transitions.systems.lr_spine`),
method ``spine_table`` (projective gold trees), after Goldberg et al. 2014,
section 6.2.  For each legal transition: the buffer is collapsed into the
right stack of maximal gold fragments (each may take dependents only at its
root), then a table over (stack trees absorbed, fragments absorbed) keeps,
per spine pair of the tree built around the top, the most gold edges.  A
combination attaches to the spine node that is the gold head when there is
one, else to the deepest node.  The two reductions of section 6.3 keep the
table small: spine nodes that can get no gold dependent from what remains
are dropped, and a spine pair is dropped when another with the same root,
no fewer spine nodes on either side and at least as many gold edges is
present.  All of it is one C call (:func:`._lrspine.scores`): the spines of
the stack trees are read off ``arcs`` once and each successor's top tree is
spliced from them, and the tables are filled by branch and bound.
"""
from semiparse.transitions.fast import _lrspine
from semiparse.transitions.fast.arc_standard import _Cache

_work = _Cache(_lrspine.SpineGold)


def scores(stack, buffer, heads, arcs, strategy):
    """sigma of every legal LR-spine transition (projective gold trees), in C:
    the successors are derived from the spines of the stack trees, one table
    each (:func:`._lrspine.scores`)."""
    return _lrspine.scores(_work.get(heads), tuple(stack),
                           buffer[0] if buffer else len(heads), tuple(arcs))
