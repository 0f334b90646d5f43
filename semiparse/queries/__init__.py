"""Queries on the distribution over trees that a grammar and edge scores define."""
