"""Build script: compiles every Cython module under semiparse/ and installs
the grammar and transition-system files as package data.

``SEMIPARSE_BOUNDSCHECK=1`` in the environment builds a checking copy for
tests (``.ci/boundscheck``): Cython's ``boundscheck`` and
``initializedcheck`` on (an index out of a memoryview's range, or an unset
memoryview, raises instead of reading or writing past the buffer;
``wraparound`` stays off, as in the normal build), compiled with ``-O1 -g``
for quicker builds and readable traces.  Raw C pointers are not covered:
``.ci/boundscheck`` adds AddressSanitizer for those where the compiler has it.

Plain C sources live next to the Cython ones as ``NAME_src.c`` with a header
``NAME_src.h``: a ``.pyx`` that declares C functions with ``cdef extern from
"semiparse/.../NAME_src.h"`` gets ``NAME_src.c`` compiled into its extension
(so several extensions can share one C file).
"""
import os
import re
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent
CHECKED = os.environ.get("SEMIPARSE_BOUNDSCHECK", "") == "1"
C_HEADER = re.compile(r'^\s*cdef\s+extern\s+from\s+"(semiparse/[\w/]+_src)\.h"', re.M)


def c_sources(pyx):
    """The ``NAME_src.c`` files whose headers ``pyx`` includes (repository paths)."""
    found = C_HEADER.findall(pyx.read_text(encoding="utf-8"))
    for stem in found:
        if not (HERE / f"{stem}.c").is_file():
            raise SystemExit(f"{pyx}: includes {stem}.h, but there is no {stem}.c")
    return sorted(set(found))


def extensions():
    """One extension per .pyx file, named after its dotted module path."""
    exts = []
    for pyx in sorted(HERE.glob("semiparse/**/*.pyx")):
        rel = pyx.relative_to(HERE).with_suffix("")
        stems = c_sources(pyx)
        exts.append(
            Extension(
                ".".join(rel.parts),
                [str(pyx.relative_to(HERE))] + [f"{stem}.c" for stem in stems],
                # the C headers are included by their path from the repository's root
                include_dirs=(["."] if stems else []) + [numpy.get_include()],
                depends=[f"{stem}{ext}" for stem in stems for ext in (".c", ".h")],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=["-O1", "-g"] if CHECKED else ["-O3"],
            )
        )
    # Each .pyx file states its own directives in its first line (language
    # level, wraparound and cdivision off); only the checks that the checking
    # build turns on are set here.
    return cythonize(
        exts,
        compiler_directives={"boundscheck": CHECKED, "initializedcheck": CHECKED},
    )


setup(
    ext_modules=extensions(),
    packages=find_packages(include=["semiparse", "semiparse.*"])
    + ["semiparse.grammars", "semiparse.systems"],
    # grammars/ and systems/ live at the top of the repository (where grammar
    # authors find them) and are installed inside the package.
    package_dir={
        "semiparse": "semiparse",
        "semiparse.grammars": "grammars",
        "semiparse.systems": "systems",
    },
    package_data={
        "semiparse.grammars": ["*.grammar"],
        "semiparse.systems": ["*.toml"],
    },
)
