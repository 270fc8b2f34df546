"""The compiled fold loop (``delaycv/engine/_loop.pyx``); the rest of the build is pyproject.toml.

The extension is optional: without a C compiler the install goes on and delaycv runs its Python
loop (``delaycv.engine.compiled``). The module records the SHA-256 of the source it was built
from, so that an edited source is never shadowed by an older build.
"""

import hashlib
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

SOURCE = Path("delaycv/engine/_loop.pyx")
DIGEST = hashlib.sha256(SOURCE.read_bytes()).hexdigest()

loop = Extension(
    "delaycv.engine._loop",
    [str(SOURCE)],
    define_macros=[("DELAYCV_LOOP_SOURCE", f'"{DIGEST}"')],
    optional=True,
)
setup(ext_modules=cythonize([loop], compiler_directives={"language_level": 3}, quiet=True))
