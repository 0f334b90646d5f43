"""Feature positions: which encoder vectors a configuration is scored from.

A position is ``sK`` (the K-th stack element from the top, ``s0`` the top),
``bK`` (the K-th buffer element from the front), ``aK`` (the K-th word set
aside, front first: Covington's list λ2 where the stack is λ1; see
``Configuration.set_aside``), optionally followed by
``.lc`` or ``.rc``: that element's leftmost or rightmost child built so far
(the extended features of Kiperwasser and Goldberg 2016).  They are read
through the configuration API (``stack``, ``buffer``, ``arcs``), so they
exist for every declared system; a position that is missing (a short stack,
an empty buffer, no child) takes a learned vector for "empty".

The default of a system covers what its transitions look at: the stack
elements its rules name plus one below (at least ``s2 s1 s0``) and the buffer
elements they name (at least ``b0``): ``s2 s1 s0 b0`` for arc-standard,
arc-hybrid and arc-eager, as Kiperwasser and Goldberg's arc-hybrid parser;
and where words are set aside, the first of them: ``s2 s1 s0 a0 b0`` for
Covington's system (the top of λ1, the words before it, the top of λ2 and
the word compared with them).
"""
import re

import numpy as np

# ASCII digits (\d takes others), no leading zero (s01 would be s1 under another name)
_POSITION = re.compile(r"([sab])(0|[1-9][0-9]*)(?:\.(lc|rc))?")


def parse_positions(spec):
    """A tuple of position names from ``"s2,s1,s0,b0"`` or a sequence of names
    (ValueError naming a bad one)."""
    names = [p.strip() for p in spec.split(",")] if isinstance(spec, str) else list(spec)
    if not names or not all(isinstance(p, str) for p in names):
        raise ValueError(f"feature positions must be names such as s0, b0, s1.lc, got {spec!r}")
    for p in names:
        if not _POSITION.fullmatch(p):
            raise ValueError(f"bad feature position {p!r}: expected sK, bK, aK (set aside), "
                             f"each alone or with .lc or .rc, such as s0.lc (K = 0, 1, ...)")
    if len(set(names)) != len(names):
        raise ValueError(f"feature positions repeat: {', '.join(names)}")
    return tuple(names)


def default_positions(system):
    """The default positions of a system definition (see the module doc)."""
    from semiparse.transitions.systems.format.system_file import parse_text

    depth_stack, depth_buffer = 2, 1
    text = getattr(system, "text", None)
    if text is not None:
        for rule in parse_text(text, system.name)[1].get("transition", []):
            depth_stack = max(depth_stack, sum(x != "*" for x in rule.get("stack", [])))
            depth_buffer = max(depth_buffer, sum(x != "*" for x in rule.get("buffer", [])))
    aside = ("a0",) if getattr(system, "sets_aside", False) else ()
    return tuple(f"s{k}" for k in range(depth_stack, -1, -1)) + aside + tuple(
        f"b{k}" for k in range(depth_buffer))


class FeatureReader:
    """Rows of the encoder matrix for the positions of many configurations."""

    def __init__(self, positions):
        self.positions = parse_positions(positions)
        self._parsed = []
        for p in self.positions:
            where, k, child = _POSITION.fullmatch(p).groups()
            self._parsed.append((where, int(k), child))
        self.children = any(child for _, _, child in self._parsed)

    def __len__(self):
        return len(self.positions)

    def positions_of(self, config):
        """The sentence position of each feature in ``config`` (-1: empty)."""
        lists = {"s": config.stack[::-1], "b": config.buffer}
        if any(where == "a" for where, _, _ in self._parsed):
            lists["a"] = config.set_aside
        arcs = config.arcs if self.children else None
        out = []
        for where, k, child in self._parsed:
            items = lists[where]
            if k >= len(items):
                out.append(-1)
                continue
            x = items[k]
            if child is not None:
                kids = [d for d, h in enumerate(arcs) if h == x]
                x = (kids[0] if child == "lc" else kids[-1]) if kids else -1
            out.append(x)
        return out

    def rows(self, configs, starts, empty):
        """An int64 array ``(len(configs), len(self))``: the row of each
        feature's vector, ``starts[i] + position`` for configuration i (the
        row of its sentence's root plus the position), or ``empty``."""
        out = np.empty((len(configs), len(self._parsed)), dtype=np.int64)
        for i, config in enumerate(configs):
            start = starts[i]
            out[i] = [start + x if x >= 0 else empty for x in self.positions_of(config)]
        return out
