"""Queries on the distribution over trees that a grammar and edge scores
define, beyond the chart's total value: edge marginals, expectations and
entropy, samples, labelled edges."""
