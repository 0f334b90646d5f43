"""Every public error and warning of semiparse, under one base.

``except semiparse.SemiparseError`` catches any error the package raises on
purpose.  Errors about the caller's input are also :class:`ValueError`, as
the API promises; the modules that raise them re-export them under their
old names (``semiparse.grammar.GrammarError``, ...).  Each message is one
line: ``FILE:LINE: reason`` for a bad file, ``PATH: reason`` for a path.
"""


class SemiparseError(Exception):
    """The base of every error semiparse raises on purpose."""


class SemiparseWarning(UserWarning):
    """The base of every warning semiparse issues."""


class GrammarError(SemiparseError, ValueError):
    """A grammar file that cannot be loaded: ``file:line:column: reason``."""

    def __init__(self, reason, file="<string>", line=None, column=None):
        self.reason, self.file, self.line, self.column = reason, file, line, column
        where = str(file)
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        super().__init__(f"{where}: {reason}")


class GrammarWarning(SemiparseWarning):
    """A grammar that loads but has unreachable or useless symbols."""


class ConlluError(SemiparseError, ValueError):
    """A problem in a CoNLL-U file: ``FILE:LINE: reason``."""

    def __init__(self, file, line, reason):
        self.file, self.line, self.reason = file, line, reason
        super().__init__(f"{file}:{line}: {reason}")


class UnknownHead(ConlluError):
    """A HEAD ``_`` read without ``partial``; ``hint`` says what reads it (by
    default partial trees), or why the reader's caller cannot."""

    def __init__(self, file, line, word, hint="an unknown head needs partial trees: --partial, "
                                              "partial=True"):
        self.word = word
        super().__init__(file, line, f"HEAD of word {word} is '_' (no basic tree; {hint})")


class OutputError(SemiparseError, ValueError):
    """An output path that cannot be written: ``PATH: reason``."""


class EncodingError(SemiparseError, ValueError):
    """A label that cannot be encoded or decoded, at word ``word`` (1..n)."""

    def __init__(self, word, reason):
        self.word, self.reason = word, reason
        super().__init__(reason)


class NoProjectiveTree(SemiparseError, ValueError):
    """No projective tree keeps the heads of the words outside ``only``."""


class TreeTooLarge(SemiparseError, ValueError):
    """The chart for a tree would not fit in the memory available: refused
    before anything is allocated (the message says how much it would need)."""


class SystemFileError(SemiparseError, ValueError):
    """A malformed system file; the message starts with ``FILE:LINE:``."""


class SystemFileWarning(SemiparseWarning):
    """A system file that loads but has a part that can never apply
    (``FILE:LINE: reason``)."""


class TreeError(SemiparseError, ValueError):
    """A bad bracketed tree in a file: ``FILE:LINE: reason``."""

    def __init__(self, file, line, reason):
        super().__init__(f"{file}:{line}: {reason}")
        self.file, self.line, self.reason = file, line, reason


class ModelError(SemiparseError, ValueError):
    """A model file that cannot be used: ``FILE: reason``."""


class ModelWarning(SemiparseWarning):
    """A model or checkpoint file written by an earlier semiparse that lacks
    a record a check needs: ``FILE: what to make sure of``."""


class ScorerRefused(SemiparseError, ValueError):
    """The official CoNLL 2018 scorer refuses a system file that semiparse
    reads (e.g. a sentence with several words attached to the root)."""


class DeadEndWarning(SemiparseWarning):
    """Training sentences were abandoned at dead ends (a system whose moves
    can leave no final configuration reachable)."""


class UserError(SemiparseError):
    """A mistake in a command's input that is no bad value (a missing extra,
    missing data): the CLI reports it on one line, without a traceback."""


class OverBudget(SemiparseError, RuntimeError):
    """A search (the constituent exhaustive search, the bounded search of a
    completion of kind search) visited more than its ``max_states`` states:
    no answer (the caller must count the case as unanswered, never as an
    estimate or as agreement)."""

    def __init__(self, max_states, what="exhaustive search"):
        self.max_states = max_states
        super().__init__(f"{what} stopped past {max_states} states")
