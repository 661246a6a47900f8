"""setup.py - the C part of pyproject.toml: the `ccasim` extension module.

Compiles python/ccasim.c with every sim/**/*.c (the sources of libccasim.a,
nothing else), flags from pkg-config, and a config.h of its own (what
configure would write for a release build).  Ships ccasim-record
(record/ccasim_record.py and record/record-site/sitecustomize.py) too.
"""
import glob
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

here = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(here, "configure.ac")) as f:
        for line in f:
            if line.startswith("AC_INIT("):
                return line.split(",")[1].strip(" []")
    return "0"


def pkg_config(*args):
    out = subprocess.run(["pkg-config"] + list(args), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("ccasim: pkg-config %s failed (apt-get install the README's packages): %s"
                         % (" ".join(args), out.stderr.strip()))
    return out.stdout.split()


def msgpack_module():
    for name in ("msgpack-c", "msgpack"):
        if subprocess.run(["pkg-config", "--exists", name]).returncode == 0:
            return name
    raise SystemExit("ccasim: msgpack-c not found by pkg-config (apt-get install libmsgpack-dev)")


class BuildExt(build_ext):
    """Writes config.h into the build directory before compiling."""

    def build_extensions(self):
        confdir = os.path.join(self.build_temp, "ccasim-config")
        os.makedirs(confdir, exist_ok=True)
        v = version()
        with open(os.path.join(confdir, "config.h"), "w") as f:
            f.write("/* written by setup.py, as configure would for a release build */\n"
                    "#define NDEBUG 1\n#define PACKAGE \"ccasim\"\n#define PACKAGE_NAME \"ccasim\"\n"
                    "#define PACKAGE_VERSION \"%s\"\n#define VERSION \"%s\"\n"
                    "#define PACKAGE_STRING \"ccasim %s\"\n" % (v, v, v))
        # the page of `ccasim view` embeds its script and style as C string
        # literals, as sim/local.mk's rule writes them
        for name in ("js", "css"):
            with open(os.path.join(here, "sim", "view", "htmlview." + name)) as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            with open(os.path.join(confdir, "htmlview-%s.h" % name), "w") as f:
                for line in lines:
                    f.write('"%s\\n"\n' % line.replace("\\", "\\\\").replace('"', '\\"'))
        for ext in self.extensions:
            ext.include_dirs.insert(0, confdir)
        super().build_extensions()


class BuildPy(build_py):
    """Also copies record/ccasim_record.py and the module's stub to the top level."""

    def run(self):
        super().run()
        for src, dst in (("record/ccasim_record.py", "ccasim_record.py"), ("python/ccasim.pyi", "ccasim.pyi")):
            self.copy_file(os.path.join(here, src), os.path.join(self.build_lib, dst))


modules = ["glib-2.0", msgpack_module(), "jansson", "liblzma", "zlib", "cairo", "fontconfig"]
cflags = pkg_config("--cflags", *modules)
libs = pkg_config("--libs", *modules)
layers = sorted(d for d in glob.glob(os.path.join("sim", "*")) if os.path.isdir(d))
sources = ["python/ccasim.c"] + sorted(glob.glob(os.path.join("sim", "*", "*.c")))

ccasim = Extension(
    "ccasim",
    sources=sources,
    include_dirs=layers + [f[2:] for f in cflags if f.startswith("-I")],
    extra_compile_args=["-std=gnu11", "-O3", "-fvisibility=hidden", "-fno-semantic-interposition"]
    + [f for f in cflags if not f.startswith("-I")],
    libraries=[f[2:] for f in libs if f.startswith("-l")] + ["m"],
    library_dirs=[f[2:] for f in libs if f.startswith("-L")],
    extra_link_args=[f for f in libs if not f.startswith(("-l", "-L"))],
)

setup(
    version=version(),
    ext_modules=[ccasim],
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
    package_dir={"": "python", "ccasim_record_site": "record/record-site"},
    py_modules=["ccasim_record_main"],
    packages=["ccasim_record_site"],
)
