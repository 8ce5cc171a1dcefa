#!/usr/bin/env python3
"""bench/python_embed.py: how bench-xapi (bench/bench_xapi.c) embeds the interpreter that
runs this script, printed as shell assignments that bench/bench.mk's rule sources. The
rule runs it with the .venv's python, the interpreter the extension tsmref.so is built
for (python.mk), so that the embedded interpreter is the one the extension was compiled
against; its headers, its shared library and the folder of that library come from its
sysconfig, as python3.X-config --embed reads them.

  PY_INC      the folder of Python.h
  PY_LIBDIR   the folder of the shared library (-L and the rpath)
  PY_LIB      the library's -l name (python3.11)
  PY_HOME     the interpreter's installation prefix (sys.base_prefix: a venv's base), the
              home bench-xapi gives the embedded interpreter to find its standard library
  PY_MISSING  empty, or what is missing and where it comes from: then bench-xapi is
              built without Python, says so, and writes its figures with value null
"""
import os
import shlex
import sys
import sysconfig


def main():
    v = sysconfig.get_config_vars()
    inc = sysconfig.get_paths()["include"]
    libdir = v.get("LIBDIR") or ""
    ldlib = v.get("LDLIBRARY") or ""
    version = v.get("VERSION") or f"{sys.version_info[0]}.{sys.version_info[1]}"
    # Debian splits the embedding files off the interpreter: Python.h and the
    # libpython3.X.so link come in libpython3.X-dev (python3-dev depends on it, and
    # python.mk declares python3-dev). Another build (pyenv, a source build) has them
    # only when it was configured with --enable-shared.
    if sys.base_prefix == "/usr":
        where = f"the Debian package libpython{version}-dev"
    else:
        where = f"the interpreter {sys.executable} built with --enable-shared"
    missing = ""
    if not os.path.exists(os.path.join(inc, "Python.h")):
        missing = f"{os.path.join(inc, 'Python.h')} ({where})"
    elif not v.get("Py_ENABLE_SHARED") or not ldlib.endswith(".so"):
        missing = f"libpython{version}.so, the shared library that embeds Python ({where})"
    elif not os.path.exists(os.path.join(libdir, ldlib)):
        missing = f"{os.path.join(libdir, ldlib)} ({where})"
    lib = ldlib[3:-3] if ldlib.startswith("lib") and ldlib.endswith(".so") else ""
    for name, value in (("PY_INC", inc), ("PY_LIBDIR", libdir), ("PY_LIB", lib),
                        ("PY_HOME", sys.base_prefix),
                        ("PY_MISSING", missing)):
        print(f"{name}={shlex.quote(value)}")


if __name__ == "__main__":
    main()
