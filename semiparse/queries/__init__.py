"""Questions asked of the chart beyond its total value: edge marginals,
expectations, samples, labels."""
