"""What every trainer of the package shares: the epoch loop, the exploration
step, and the training trees.

The perceptron, RDA and beam trainers (:mod:`semiparse.perceptron`), the
neural lockstep trainer (:mod:`semiparse.neural`) and the constituent
perceptron (:mod:`semiparse.constituency.train`) all train the same way
(Goldberg and Nivre 2012, 2013): epochs over the training sentences shuffled
with the run's generator, and in each configuration the transition to follow
chosen from the model's scores, the legal and the optimal transitions.  Each
parser plugs in its own scoring and update:

* :mod:`.loop`: :func:`~.loop.epochs` (shuffle, progress bar, the counts and
  dead ends of one epoch), the record logged and the dead ends reported;
* :mod:`.explore`: :class:`~.explore.Exploration`, the one exploration step
  (one configuration, or the rows of a lockstep batch);
* :mod:`.trees`: the training trees after the ``--nonproj`` policy
  (:func:`~.trees.prepare`), their checks, labels and root label.
"""
