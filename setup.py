"""The build behind `pip install .` (pyproject.toml): CMake builds the extension dplace._dplace with the C
library's static layers, for the interpreter running pip; the package's Python files come from python/dplace,
and scripts/dplace-export-torch becomes dplace._export_torch, as the CMake build assembles them.

DPLACE_CMAKE_BUILD_DIR: an existing CMake build folder to build the extension in (as configured there, for the
same interpreter), instead of a fresh one under build-pip/; setuptools' files then go into its pip/ folder.
CMAKE_BUILD_PARALLEL_LEVEL sets CMake's jobs.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(dplace VERSION ([0-9.]+)", f.read()).group(1)


class CMakeExtension(build_ext):
    """Builds dplace._dplace with CMake and copies it where setuptools packs it."""

    def build_extension(self, ext):
        build = os.environ.get("DPLACE_CMAKE_BUILD_DIR")
        if build:
            build = os.path.abspath(build)
        else:
            build = os.path.join(os.path.abspath(self.build_temp), "cmake")
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, f"-DPython3_EXECUTABLE={sys.executable}"])
        cmd = ["cmake", "--build", build, "--target", "_dplace"]
        if self.parallel:
            cmd += ["-j", str(self.parallel)]
        if subprocess.call(cmd):
            sys.exit(f"dplace: CMake did not build the extension _dplace in {build}: it needs CMake, a C compiler, "
                     f"the library's packages (scripts/setup.sh) and, for {sys.executable}, its headers "
                     "(python3-dev) and numpy (python3-numpy); CMake's messages above say which is missing")
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build, "python", "dplace", "_dplace" + suffix)
        if not os.path.exists(built):
            found = glob.glob(os.path.join(build, "python", "dplace", "_dplace*"))
            sys.exit(f"dplace: no {built} (found {found or 'none'}): {build} was configured for another "
                     f"interpreter than {sys.executable}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


class BuildPy(build_py):
    """The package's Python files, and the exporter script as dplace._export_torch."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "dplace", "_export_torch.py")
        shutil.copyfile(os.path.join(ROOT, "scripts", "dplace-export-torch"), dest)


# setuptools' own build folder would be build/, the CMake build's: it is build-pip/, or the pip/ folder of
# DPLACE_CMAKE_BUILD_DIR, so that nothing is written into the sources.
BASE = os.path.join(os.path.abspath(os.environ["DPLACE_CMAKE_BUILD_DIR"]), "pip") \
    if os.environ.get("DPLACE_CMAKE_BUILD_DIR") else os.path.join(ROOT, "build-pip")
os.makedirs(BASE, exist_ok=True)
setup(
    version=version(),
    ext_modules=[Extension("dplace._dplace", sources=[])],
    cmdclass={"build_ext": CMakeExtension, "build_py": BuildPy},
    options={"build": {"build_base": BASE}, "egg_info": {"egg_base": BASE}},
)
