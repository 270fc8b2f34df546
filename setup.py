"""The compiled fold loop (``delaycv/engine/_loop.pyx``); the rest of the build is pyproject.toml.

The extension is optional: without a C compiler the install goes on and delaycv runs its Python
loop (``delaycv.engine.compiled``). The module records the SHA-256 of the source it was built
from, so that an edited source is never shadowed by an older build.
"""

import hashlib
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path("delaycv/engine/_loop.pyx")
DIGEST = hashlib.sha256(SOURCE.read_bytes()).hexdigest()

loop = Extension(
    "delaycv.engine._loop",
    [str(SOURCE)],
    define_macros=[("DELAYCV_LOOP_SOURCE", f'"{DIGEST}"')],
)


class OptionalBuildExt(build_ext):
    """Builds the extension if it can; otherwise says so, drops it and lets the install go on
    (setuptools' own ``optional`` misses a compiler that fails as a subprocess, and an editable
    install would then look for the missing file)."""

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        built = []
        for ext in self.extensions:
            try:
                self.build_extension(ext)
            except Exception as err:  # any failure of the compiler: the Python loop will run
                print(
                    f"delaycv: the compiled fold loop was not built ({type(err).__name__}: "
                    f"{err}); delaycv will run its Python loop (the same results, a few % slower)",
                    file=sys.stderr,
                )
            else:
                built.append(ext)
        self.extensions[:] = built


setup(
    ext_modules=cythonize([loop], compiler_directives={"language_level": 3}, quiet=True),
    cmdclass={"build_ext": OptionalBuildExt},
)
