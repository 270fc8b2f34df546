"""The compiled loops (``delaycv/engine/_loop.pyx``, the fold loop; ``delaycv/metrics/_effort_loop.pyx``,
the effort-aware measures; ``delaycv/metrics/_corrected_kernel.pyx``, the corrected reference's
fold state; ``delaycv/metrics/_fading_sums.pyx``, the fading estimator's running sums;
``delaycv/common/_libm.pyx``, the C library's exp, log and pow on arrays); the rest of the build
is pyproject.toml.

The extensions are optional: without a C compiler the install goes on and delaycv runs their
Python twins (``delaycv.common.native``). Each module records the SHA-256 of the source it was built
from, so that an edited source is never shadowed by an older build. They are compiled without
fused multiply-adds (``-ffp-contract=off``; a compiler forms them where the processor has them,
e.g. on ARM), which round once where their twins round twice: the values stay the twins' own.
"""

import hashlib
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def compiled(name: str, macro: str) -> Extension:
    """The extension ``name`` (dotted) from its ``.pyx``, recording the source's SHA-256 in the
    C macro ``macro`` (its module's ``SOURCE_DIGEST``)."""
    source = Path(*name.split(".")).with_suffix(".pyx")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return Extension(name, [str(source)], define_macros=[(macro, f'"{digest}"')])


EXTENSIONS = [
    compiled("delaycv.engine._loop", "DELAYCV_LOOP_SOURCE"),
    compiled("delaycv.metrics._effort_loop", "DELAYCV_EFFORT_SOURCE"),
    compiled("delaycv.metrics._corrected_kernel", "DELAYCV_CORRECTED_SOURCE"),
    compiled("delaycv.metrics._fading_sums", "DELAYCV_FADING_SOURCE"),
    compiled("delaycv.common._libm", "DELAYCV_LIBM_SOURCE"),
]


class OptionalBuildExt(build_ext):
    """Builds the extension if it can; otherwise says so, drops it and lets the install go on
    (setuptools' own ``optional`` misses a compiler that fails as a subprocess, and an editable
    install would then look for the missing file)."""

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        if self.compiler.compiler_type != "msvc":  # (MSVC does not contract by default)
            for ext in self.extensions:
                ext.extra_compile_args = [*ext.extra_compile_args, "-ffp-contract=off"]
        built = []
        for ext in self.extensions:
            try:
                self.build_extension(ext)
            except Exception as err:  # any failure of the compiler: the Python loop will run
                print(
                    f"delaycv: {ext.name} was not built ({type(err).__name__}: {err}); delaycv "
                    "will run its Python twin (the same results, slower)",
                    file=sys.stderr,
                )
            else:
                built.append(ext)
        self.extensions[:] = built


setup(
    ext_modules=cythonize(EXTENSIONS, compiler_directives={"language_level": 3}, quiet=True),
    cmdclass={"build_ext": OptionalBuildExt},
)
