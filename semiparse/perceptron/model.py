"""Trained parser models: labelled classes, decoding, saving and loading.

A model is a transition system, a label list, feature templates and a
:class:`~semiparse.perceptron._core.Weights` table over the classes of
:func:`system_classes` (``<move>`` or ``<move>:<label>``).  The file records
the system's definition, so a model of a user's system file parses without
that file.  The file format is
described in ``docs/training.md``: a NumPy ``.npz`` archive (no pickles) with
a JSON header ``meta``, the sorted feature keys ``keys`` (uint64) and the
weight rows ``weights`` (float32, one column per class).
"""
import hashlib
import json
import os
import zipfile

import numpy as np

from semiparse.transitions.runtime._machine import machine_for
from semiparse.transitions.systems.loading import definition_sha256, load_system, system_from_text
from semiparse.transitions.oracles.viability import Viability
from semiparse.treebank.outputs import open_output
from semiparse.perceptron import _core
from semiparse.perceptron.features import ZHANG_NIVRE, compile_templates
from semiparse.training import single_root
from semiparse.treebank.data import ROOT_WORD, stable_hash
from semiparse.errors import ModelError

FORMAT = "semiparse-parser-model"
VERSION = 1
SPINE_DEPTH = 4  # LR-spine classes attach to the first SPINE_DEPTH nodes of a spine
SYSTEMS = ("arc_standard", "arc_hybrid", "arc_eager", "lr_spine")  # the shipped systems
# The shipped arc-eager models give reduce one class per label (a layout older
# than :func:`system_classes`'s rule); kept so that those models load unchanged.
_LEGACY_MOVES = {"arc_eager": ("left_arc", "right_arc", "reduce")}
# Meta keys that record the system (not passed on as the model's free meta).
SYSTEM_KEYS = ("system", "system_definition", "system_sha256", "system_grammar",
               "system_grammar_sha256")


def system_classes(system, labels):
    """The classes of a model of ``system`` (an object): in the order of its
    transitions, ``(t, None)`` for a transition ``t`` that adds no edge and
    ``(t, label)`` for each label otherwise.  LR-spine has shift and
    ``left_arc_K`` / ``right_arc_K`` with labels for K <= SPINE_DEPTH."""
    if machine_for(system).spine:
        moves = tuple(f"{kind}_{k}" for k in range(1, SPINE_DEPTH + 1)
                      for kind in ("left_arc", "right_arc"))
        return [("shift", None)] + [(m, l) for m in moves for l in labels]
    if getattr(system, "shipped", False) and system.name in _LEGACY_MOVES:
        return [("shift", None)] + [(m, l) for m in _LEGACY_MOVES[system.name] for l in labels]
    return [(t, l) for t in system.transitions
            for l in (labels if system.adds_edge(t) else [None])]


def system_record(system):
    """The meta entries that record a system: its name and, for a declared
    system, its TOML text, :func:`definition_sha256` and the text of its
    completion grammar with its sha256 (so that the model alone rebuilds the
    system, and an edit of either is seen)."""
    digest = definition_sha256(system)
    if digest is None:
        return {"system": system.name}
    record = {"system": system.name, "system_definition": system.text, "system_sha256": digest}
    if system.grammar is not None:
        record["system_grammar"] = system.grammar_text
        record["system_grammar_sha256"] = _sha256(system.grammar_text)
    return record


def model_path(path):
    """``path`` of a model file as a str (given as str, bytes or a path
    object); ValueError for anything else, None included (which open_output
    would take for standard output)."""
    try:
        return os.fsdecode(os.fspath(path))
    except TypeError:
        raise ValueError(f"a model file's path must be a str or path object, got {path!r:.60}") from None


def check_model_file(path, what="model file"):
    """ModelError unless ``path`` is a regular file that exists: a directory
    is not one, and a FIFO or device would block the readers, which open
    a file more than once."""
    if os.path.isdir(path):
        raise ModelError(f"{path}: is a directory, not a {what}")
    if not os.path.exists(path):
        raise ModelError(f"{path}: {what} not found")
    if not os.path.isfile(path):
        raise ModelError(f"{path}: not a regular file (a FIFO or a device), so not a {what}")


def _plain(value):
    """A numpy scalar in the meta data as the Python number JSON writes."""
    if isinstance(value, np.generic):
        return value.item()
    raise ValueError(f"a model's meta data must be JSON: {value!r:.60} ({type(value).__name__}) "
                     f"is not")


def _sha256(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def recorded_system(path, meta):
    """The system a model's meta records: rebuilt from the stored definition,
    or, for a model without one (older files), the shipped system of its name."""
    name, text = meta.get("system"), meta.get("system_definition")
    if text is None:
        if name not in SYSTEMS:
            raise ModelError(f"{path}: unknown transition system {name!r} and no recorded "
                             f"definition")
        return load_system(name)
    grammar = meta.get("system_grammar")
    if not isinstance(text, str) or not isinstance(grammar, (str, type(None))):
        raise ModelError(f"{path}: the recorded system definition is not TOML text")
    if name in SYSTEMS and definition_sha256(load_system(name)) == meta.get("system_sha256"):
        return load_system(name)  # the shipped definition: share its object (and machine)
    recorded_sha = meta.get("system_grammar_sha256")  # absent from older files
    if grammar is not None and recorded_sha is not None and recorded_sha != _sha256(grammar):
        raise ModelError(f"{path}: the recorded completion grammar does not match its sha256 "
                         f"(damaged model file)")
    try:
        system = system_from_text(text, f"{path} (recorded system {name})", grammar)
    except ValueError as exc:
        raise ModelError(f"{path}: its recorded system definition is invalid: {exc}") from None
    if system.name != name or definition_sha256(system) != meta.get("system_sha256"):
        raise ModelError(f"{path}: the recorded system definition does not match its name "
                         f"and sha256 (damaged model file)")
    return system


def check_same_system(path, recorded, wanted):
    """Raise ModelError unless the system ``wanted`` (a name, path,
    ``module:attr`` or object) has the definition recorded in the model."""
    try:
        wanted = load_system(wanted)
    except ValueError as exc:
        raise ModelError(f"{path}: cannot check the model's system: {exc}") from None
    if wanted.name != recorded.name:
        raise ModelError(f"{path}: model is for the {recorded.name} system, not {wanted.name}")
    if wanted is not recorded and definition_sha256(wanted) != definition_sha256(recorded):
        raise ModelError(f"{path}: model is for another definition of the {recorded.name} "
                         f"system (sha256 {str(definition_sha256(recorded))[:12]}, given "
                         f"{str(definition_sha256(wanted))[:12]})")


def check_beam(beam):
    """Raise ValueError unless ``beam`` is a usable beam size (an integer >= 1)."""
    if isinstance(beam, bool) or not isinstance(beam, (int, np.integer)) or beam < 1:
        raise ValueError(f"beam size must be an integer >= 1, got {beam!r}")


def unseen_labels(tree, known):
    """``FILE:LINE: ...`` messages for the annotated labels of ``tree`` not in
    ``known``, the labels a model's parses can have."""
    where = tree.source.file if tree.source is not None else "<tree>"
    return [
        f"{where}:{tree.line_of(d)}: label {tree.labels[d]!r} was not seen in training "
        f"(the model knows {len(known)} labels and cannot predict it)"
        for d in range(1, len(tree) + 1)
        if tree.labels[d] not in known and tree.labels[d] != "_"
    ]


class Model:
    """A labelled transition-based parser: system, labels, templates, weights."""

    def __init__(self, system, labels, templates=ZHANG_NIVRE, rda=False, beam=1, meta=None):
        labels = [] if isinstance(labels, str) else list(labels)  # a string is no list of labels
        if (not labels or len(set(labels)) != len(labels)
                or not all(isinstance(label, str) for label in labels)):
            raise ValueError("labels must be a non-empty list of distinct strings")
        check_beam(beam)
        self.transition_system = load_system(system)
        self.system = self.transition_system.name
        self.machine = machine_for(self.transition_system)
        self.labels = labels
        self.label_index = {label: i for i, label in enumerate(labels)}
        self.template_strings = list(templates)
        self.templates = compile_templates(self.template_strings)
        self.beam = int(beam)
        self.meta = dict(meta or {})
        self.root_label = self.meta.get("root_label", labels[0])
        if self.root_label not in self.label_index:
            raise ValueError(f"root label {self.root_label!r} is not among the labels")
        self.classes = system_classes(self.transition_system, labels)
        self.cls_move = np.array([self.machine.code(m) for m, _ in self.classes], dtype=np.int32)
        self.cls_label = np.array([-1 if l is None else self.label_index[l] for _, l in self.classes],
                                  dtype=np.int32)
        self.class_of = {c: i for i, c in enumerate(self.classes)}
        self.classes_of_move = {}
        for i, (m, _) in enumerate(self.classes):
            self.classes_of_move.setdefault(self.machine.code(m), []).append(i)
        self.weights = _core.Weights(len(self.classes), rda)
        self.dead_ends = 0  # sentences whose greedy parse reached a dead end (see parse)
        self._viability = None

    # -- input -------------------------------------------------------------

    def sentence(self, tree):
        """The core :class:`~semiparse.perceptron._core.Sentence` of a
        :class:`~semiparse.treebank.data.Tree` (gold labels unknown to the model become -1)."""
        n = len(tree)
        words = [ROOT_WORD] + [stable_hash(w) for w in tree.forms[1:]]
        tags = [ROOT_WORD] + [stable_hash(t) for t in tree.tags[1:]]
        heads = tree.heads if tree.heads is not None else [-1] * (n + 1)
        labels = [-1] + [self.label_index.get(l, -1) for l in tree.labels[1:]]
        return _core.Sentence(words, tags, heads, labels)

    def unseen_labels(self, tree):
        """``FILE:LINE: ...`` messages for annotated labels the model never saw in training."""
        return unseen_labels(tree, self.label_index)

    def state(self, sentence):
        return _core.State(sentence, self.machine)

    # -- decoding ----------------------------------------------------------

    def apply(self, state, cls):
        state.do(int(self.cls_move[cls]), int(self.cls_label[cls]))

    def probabilities(self, scores, valid):
        """Softmax of the scores over the valid classes (0 elsewhere)."""
        s = np.where(valid, scores, -np.inf)
        s = s - s.max()
        p = np.exp(s)
        return p / p.sum()

    def parse(self, tree, beam=None, with_probabilities=False, root="single"):
        """``(heads, labels, steps)`` of the best parse; ``steps`` lists
        ``(class name, probability)`` when asked (greedy decoding only).

        ``root="single"`` (the default) gives the sentence exactly one word
        attached to the root, as Universal Dependencies requires and the
        CoNLL 2018 scorer checks (:mod:`semiparse.training.single_root`):
        for a system where it is exact (arc-standard, arc-hybrid, their
        swap versions, ...), the decoder lets the root take a child only as
        the last edge, when every other word has a head; for the others
        (arc-eager, LR-spine, ...) the parse is repaired after decoding: the
        root keeps its child labelled with the root label by the model (of
        those, the one heading the most words; then the first), and its other
        children are attached to that word, with their label, or where that
        is the root label, ``parataxis`` (``dep``, or the first other label,
        where the model has no such label).  ``root="any"`` keeps the parse
        as the model made it, for treebanks that allow several root children.

        A greedy parse that reaches a dead end (a configuration that is not
        final and from which no final one is reachable, which some declared
        systems have; or, in a system whose moves can loop, ``max_steps``
        moves) is parsed again taking the model's best move among
        those after which a final configuration stays reachable
        (:class:`~semiparse.transitions.oracles.viability.Viability`), so every
        sentence gets a complete parse; :attr:`dead_ends` counts such
        sentences.  The words left without a head are attached to the root
        with the root label (arc-eager leaves on the stack; all of them in
        the one case where even the initial configuration cannot finish), so
        the output is always a tree."""
        beam = self.beam if beam is None else beam
        check_beam(beam)
        single = single_root.check_root(root) == "single"
        rule = single and self.single_root_exact()
        sent = self.sentence(tree)
        if beam > 1 and not with_probabilities:
            state = self.beam_search(sent, beam, rule)
            steps = []
        elif with_probabilities:
            state, steps = self._stepwise(sent, True, rule=rule)
        else:
            state = self.state(sent)
            _core.greedy_parse(state, self.weights, self.templates, self.cls_move, self.cls_label,
                               rule)
            steps = []
        if not state.is_final():
            self.dead_ends += 1
            state, steps = self._viable_parse(sent, with_probabilities, rule) or (state, steps)
        heads = list(state.arcs)
        labels = [None] + [self.labels[l] if l >= 0 else self.root_label for l in state.labels[1:]]
        if single:
            heads, labels = self._one_root(heads, labels)
        for d in range(1, len(heads)):
            if heads[d] < 0:
                heads[d], labels[d] = 0, self.root_label
        return heads, labels, steps

    def single_root_exact(self):
        """Whether single-root decoding constrains this model's system exactly
        (:func:`semiparse.training.single_root.exact`; else parses are
        repaired)."""
        return single_root.exact(self.transition_system)

    def _one_root(self, heads, labels):
        """``(heads, labels)`` repaired to one root child (see :meth:`parse`):
        a word attached to the root by a transition with the root label comes
        first, then the one heading more words (``-1``: no head yet, a root
        child)."""
        children = single_root.root_children(heads)
        if len(children) == 1:
            return heads, labels
        sizes = single_root.subtree_sizes(heads)
        scores = [(heads[d] == 0 and labels[d] == self.root_label, sizes[d])
                  for d in range(len(heads))]
        heads, moved = single_root.single_root(heads, scores)
        labels = list(labels)
        for d in moved:
            if labels[d] == self.root_label:
                labels[d] = self._attached_label()
        return heads, labels

    def _attached_label(self):
        """The label of a root child the repair attaches to another word
        where its own is the root label."""
        for label in ("parataxis", "dep"):
            if label in self.label_index and label != self.root_label:
                return label
        return next((label for label in self.labels if label != self.root_label), self.root_label)

    def _viable_parse(self, sent, with_probabilities=False, rule=False):
        """``(state, steps)`` of a greedy parse that takes the model's best
        move among the viable ones (from which a final configuration is
        reachable); None for a system whose oracle cannot tell them (no
        completion grammar or registered method)."""
        if self._viability is None:
            self._viability = Viability(self.transition_system)
        try:
            return self._stepwise(sent, with_probabilities, self._viability, rule)
        except ValueError:  # no oracle method applies to this system
            return None

    def _stepwise(self, sent, with_probabilities, viability=None, rule=False):
        """``(state, steps)`` of a greedy parse taken one step at a time: the
        model's best valid class, with ``viability`` only among the moves it
        says can still finish, with ``rule`` only among those the
        single-root rule allows (:mod:`semiparse.training.single_root`);
        ``steps`` lists ``(class name, probability)`` when asked (among the
        classes the rule allows)."""
        C = len(self.classes)
        scores = np.empty(C)
        valid = np.empty(C, dtype=np.uint8)
        state, steps = self.state(sent), []
        while not state.is_final() and state.steps < state.max_steps:
            _core.step_scores(state, self.weights, self.templates, self.cls_move, scores, valid)
            if rule:
                _core.root_mask(state, self.cls_move, valid)
            ok = valid.astype(bool)
            if viability is not None:
                ok &= self.classes_with_moves(viability.names(state.stack, state.buffer,
                                                              state.arcs, state.n))
            if not ok.any():
                break  # a dead end, or (viable moves only) not even the start can finish
            best = int(np.argmax(np.where(ok, scores, -np.inf)))
            if with_probabilities:
                p = self.probabilities(scores, valid.astype(bool))
                steps.append((self.class_name(best), float(p[best])))
            self.apply(state, best)
        return state, steps

    def classes_with_moves(self, names):
        """Per class, whether its move is one of the transitions ``names``."""
        return np.isin(self.cls_move, [self.machine.code(t) for t in names])

    def beam_search(self, sent, beam, rule=False):
        """Final configuration of a beam search of the given width; a
        configuration that reaches a dead end (or ``max_steps`` moves: a
        loop) falls off the beam, and if all do, the best of them is
        returned.  ``rule``: only the moves the single-root rule
        allows (:mod:`semiparse.training.single_root`)."""
        C = len(self.classes)
        scores = np.empty(C)
        valid = np.empty(C, dtype=np.uint8)
        items = [(0.0, self.state(sent))]
        while not all(st.is_final() for _, st in items):
            candidates = []
            for total, st in items:
                if st.is_final():
                    candidates.append((total, st, -1))
                    continue
                if st.steps >= st.max_steps:  # the model's moves loop: it falls off
                    continue
                _core.step_scores(st, self.weights, self.templates, self.cls_move, scores, valid)
                if rule:
                    _core.root_mask(st, self.cls_move, valid)
                for c in np.flatnonzero(valid):
                    candidates.append((total + scores[c], st, int(c)))
            if not candidates:
                break
            candidates.sort(key=lambda x: -x[0])
            items = []
            for total, st, c in candidates[:beam]:
                if c >= 0:
                    st = st.copy()
                    self.apply(st, c)
                items.append((total, st))
        return items[0][1]

    def class_name(self, cls):
        move, label = self.classes[cls]
        return move if label is None else f"{move}:{label}"

    # -- files -------------------------------------------------------------

    def save(self, path):
        """Write the model (atomically, see :func:`semiparse.treebank.outputs.open_output`)."""
        path = model_path(path)
        keys, weights = self.weights.export()
        meta = {
            "format": FORMAT,
            "version": VERSION,
            **system_record(self.transition_system),
            "labels": self.labels,
            "templates": self.template_strings,
            "templates_sha256": _sha256(json.dumps(self.template_strings)),
            "classes": [self.class_name(i) for i in range(len(self.classes))],
            "beam": self.beam,
            "n_nonzero": int(np.count_nonzero(weights)),
            **{k: v for k, v in self.meta.items() if k not in ("format", "version") + SYSTEM_KEYS},
        }
        with open_output(path, binary=True) as stream:
            np.savez_compressed(
                stream,
                meta=np.array(json.dumps(meta, default=_plain)),
                keys=keys,
                weights=weights.astype(np.float32),
            )

    @classmethod
    def load(cls, path, system=None):
        """Read a model written by :meth:`save`.  Its system is rebuilt from the
        recorded definition (so the system file is not needed); ``system``, if
        given, must have the same name and definition (sha256).

        Any problem (missing, truncated or foreign file, other system) is a
        :class:`ModelError` naming the file and the reason.
        """
        path = model_path(path)
        check_model_file(path)
        try:
            with open(path, "rb") as head:
                if head.read(2) != b"PK":  # np.load would take it for a pickle or a .npy file
                    raise ModelError(f"{path}: not a semiparse model (a model file is a zip archive)")
            with np.load(path, allow_pickle=False) as archive:
                names = set(archive.files)
                missing = {"meta", "keys", "weights"} - names
                if missing and any(name.endswith("/data.pkl") for name in names):
                    raise ModelError(f"{path}: a PyTorch file (a neural model or a training "
                                     f"checkpoint), not a perceptron model: semiparse.neural.load "
                                     f"reads neural models")
                if missing:
                    raise ModelError(f"{path}: not a semiparse parser model (no {', '.join(sorted(missing))})")
                meta = json.loads(str(archive["meta"]))
                keys = archive["keys"]
                weights = archive["weights"]
        except FileNotFoundError:
            raise ModelError(f"{path}: model file not found") from None
        except ModelError:
            raise
        except RecursionError:  # json recurses once per level of nesting (before RuntimeError)
            raise ModelError(f"{path}: not a semiparse parser model (its meta data is nested "
                             f"too deeply)") from None
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError,
                NotImplementedError, RuntimeError) as exc:  # the last two: a damaged zip header
            raise ModelError(f"{path}: not a readable semiparse model (truncated or corrupt: {exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ModelError(f"{path}: not a semiparse parser model")
        if meta.get("version") != VERSION:
            raise ModelError(f"{path}: model format version {meta.get('version')!r} (this semiparse reads {VERSION})")
        recorded = recorded_system(path, meta)
        if system is not None:
            check_same_system(path, recorded, system)
        try:
            model = cls(recorded, meta["labels"], meta["templates"], beam=int(meta.get("beam", 1)),
                        meta={k: v for k, v in meta.items()
                              if k not in SYSTEM_KEYS + ("labels", "templates", "templates_sha256",
                                                         "classes", "beam")})
            recorded_sha = meta.get("templates_sha256")  # absent from older files
            if recorded_sha is not None and recorded_sha != _sha256(json.dumps(meta["templates"])):
                raise ValueError("its feature templates do not match their sha256 (edited)")
            if meta.get("classes") != [model.class_name(i) for i in range(len(model.classes))]:
                raise ValueError("its class list does not match its system and labels")
            if keys.dtype != np.uint64 or weights.ndim != 2 or len(keys) != len(weights):
                raise ValueError("its weight arrays are malformed")
            if not (keys[1:] > keys[:-1]).all():  # save writes them sorted, each once
                raise ValueError("its feature keys are not strictly increasing")
            if weights.dtype.kind not in "fiu" or not np.isfinite(weights).all():
                raise ValueError("its weights are not all finite numbers (NaN or infinity)")
            weights = np.ascontiguousarray(weights, dtype=np.float64)
            # a row of len(classes) weights per key (also for none: an untrained model)
            model.weights.load(np.ascontiguousarray(keys),
                               weights.reshape(len(keys), len(model.classes)))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelError(f"{path}: inconsistent model: {exc}") from None
        return model

    def n_nonzero(self):
        return self.weights.n_nonzero()
