"""Treebanks: CoNLL-U reading and writing (``conllu``, with the C reader
``_conllu``), the column layout (``columns``), optimal projectivization
(``projectivity``), pseudo-projective label encodings (``encoding``) and
safe output files (``outputs``)."""
