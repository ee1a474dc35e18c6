#!/usr/bin/env python3
"""Build and install llama-cpp-python for a stated, portable CPU baseline (never ``-march=native``).

Why: llama.cpp's default CMake build is native. On a VM whose CPU *reports* AVX-512/AMX but does not let a
process use AMX, a native build dies with SIGILL (an AMX ``tileloadd`` in ``libggml-cpu.so``) on the first
batched prompt (issue 11; docs/measurements.md). pip also caches a source-built wheel by name + version
only, so a native wheel built once can be reused on another CPU.

What this does (stdlib only; run with the venv's python by ``scripts/setup.sh``):

1. ``recipe()``: the CMake flags for this architecture, fixed by policy, not by the host:
   * x86-64: ``GGML_NATIVE=OFF`` and the x86-64-v3 ("haswell") level, i.e. SSE4.2, AVX, AVX2, FMA, F16C,
     BMI2 switched on explicitly and AVX-VNNI, AVX-512*, AMX* switched off (levels: llama.cpp's own
     ``ggml_add_cpu_backend_variant(haswell ...)`` list in ``ggml/src/CMakeLists.txt``). A CPU without
     AVX2/FMA/F16C gets the plain x86-64 level (all of those off). llama.cpp's runtime variant
     selection (``GGML_CPU_ALL_VARIANTS``) is *not* used: it needs ``GGML_BACKEND_DL``, which this
     llama-cpp-python does not load, and it would pick the AMX variant on exactly the VM that crashed.
   * aarch64 / other: ``GGML_NATIVE=OFF`` (the compiler's generic target for the architecture).
2. The wheel is built with ``pip wheel --no-cache-dir`` (pip's cache is never read nor written) into a
   wheelhouse keyed by a hash of (version, flags, Python tag): ``$ASSISTANT_WHEEL_CACHE`` or
   ``~/.cache/paper-assistant/wheels/<key>/``. A different recipe never reuses another's wheel.
3. The installed copy is checked against a stamp (``.venv/llama-cpp-build.json``: recipe key + sha256 of
   the installed ``libggml-cpu``). No stamp, another recipe, or another library (e.g. a native wheel
   that pip pulled from its cache) -> force-reinstall from the wheelhouse. Re-running is cheap.

Usage: ``python scripts/llama_build.py [--print-recipe] [--check]``. ``--check`` exits 1 when the installed
build does not match the recipe (used by the tests). Errors: exits non-zero with the pip output.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: Must equal the pin in pyproject.toml (tests/robustness/test_portable_build.py checks).
LLAMA_CPP_VERSION = "0.3.36"

#: Build parts we do not use (multimodal, tools, examples, tests): shortens the compile.
_TRIM = [
    "-DLLAVA_BUILD=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=OFF", "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_CURL=OFF",
]
#: x86-64-v3: what llama.cpp calls the "haswell" CPU variant.
_X86_V3_ON = ["SSE42", "AVX", "AVX2", "FMA", "F16C", "BMI2"]
#: Never on in a portable build (AVX-512 and AMX need OS support a VM may withhold).
X86_FORBIDDEN = ["AVX_VNNI", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16",
                 "AMX_TILE", "AMX_INT8", "AMX_BF16"]


def _host_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def baseline() -> str:
    """The CPU level the build targets: ``x86-64-v3``, ``x86-64`` or ``<machine>-generic``."""
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        flags = _host_flags()
        return "x86-64-v3" if {"avx2", "fma", "f16c"} <= flags or not flags else "x86-64"
    return f"{machine}-generic"


def recipe() -> list[str]:
    """CMake flags (list of ``-D...`` strings) of the portable build for this architecture."""
    level = baseline()
    flags = ["-DGGML_NATIVE=OFF", "-DGGML_CPU_ALL_VARIANTS=OFF", "-DGGML_BACKEND_DL=OFF"]
    if level.startswith("x86-64"):
        on = _X86_V3_ON if level == "x86-64-v3" else []
        flags += [f"-DGGML_{f}={'ON' if f in on else 'OFF'}" for f in _X86_V3_ON]
        flags += [f"-DGGML_{f}=OFF" for f in X86_FORBIDDEN]
    return flags + _TRIM


def recipe_key() -> str:
    """16 hex chars identifying (version, baseline, flags, Python ABI)."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}-{platform.machine()}"
    blob = json.dumps([LLAMA_CPP_VERSION, baseline(), recipe(), tag])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def wheelhouse() -> Path:
    root = Path(os.environ.get("ASSISTANT_WHEEL_CACHE", Path.home() / ".cache" / "paper-assistant" / "wheels"))
    return root / f"llama-cpp-python-{LLAMA_CPP_VERSION}-{recipe_key()}"


def installed_libraries() -> list[Path]:
    """Shared libraries of the installed ``llama_cpp`` package (empty when it is not installed)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    lib = Path(list(spec.submodule_search_locations)[0]) / "lib"
    return sorted(p for p in lib.glob("*.so*") if p.is_file()) if lib.is_dir() else []


def cpu_library() -> Path | None:
    """The installed ``libggml-cpu`` (where the SIMD kernels live), or None."""
    libs = [p for p in installed_libraries() if p.name.startswith("libggml-cpu")]
    return libs[0] if libs else None


def stamp_path() -> Path:
    return Path(sys.prefix) / "llama-cpp-build.json"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def installed_matches() -> tuple[bool, str]:
    """(True, "") when the installed build is the one this recipe made, else (False, reason)."""
    lib = cpu_library()
    if lib is None:
        return False, "llama-cpp-python is not installed"
    try:
        stamp = json.loads(stamp_path().read_text())
    except (OSError, ValueError):
        return False, "no build stamp: installed by something other than scripts/llama_build.py"
    if stamp.get("key") != recipe_key():
        return False, f"built by another recipe ({stamp.get('baseline')}, key {stamp.get('key')})"
    if stamp.get("lib_sha256") != _sha256(lib):
        return False, f"{lib.name} differs from the one this recipe built (replaced, e.g. from pip's cache)"
    return True, ""


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    subprocess.run(cmd, check=True, env=env)


def build_wheel() -> Path:
    """Build the wheel into the wheelhouse unless it is there; returns the wheel's path."""
    house = wheelhouse()
    found = sorted(house.glob("llama_cpp_python-*.whl")) if house.is_dir() else []
    if found:
        return found[0]
    print(f"[setup] compiling llama-cpp-python {LLAMA_CPP_VERSION} for {baseline()} "
          f"(portable, not -march=native; about 5 min on 2 cores, once)", flush=True)
    env = dict(os.environ, CMAKE_ARGS=" ".join(recipe()))
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    house.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=house.parent) as tmp:
        _pip("wheel", "-q", "--no-deps", "--no-cache-dir", "--no-binary", "llama-cpp-python",
             f"llama-cpp-python=={LLAMA_CPP_VERSION}", "-w", tmp, env=env)
        shutil.rmtree(house, ignore_errors=True)
        os.replace(tmp, house)  # atomic: a half-built wheelhouse is never seen
        os.mkdir(tmp)  # so TemporaryDirectory's cleanup finds its directory
    return sorted(house.glob("llama_cpp_python-*.whl"))[0]


def ensure_installed() -> None:
    """Install (or repair) the portable build in the running interpreter's environment."""
    ok, why = installed_matches()
    if ok:
        return
    wheel = build_wheel()
    print(f"[setup] installing portable llama-cpp-python ({why})", flush=True)
    _pip("install", "-q", "--force-reinstall", "--no-deps", str(wheel))
    lib = cpu_library()
    if lib is None:
        sys.exit(f"[setup] error: {wheel.name} installed no libggml-cpu library")
    stamp_path().write_text(json.dumps({
        "key": recipe_key(), "baseline": baseline(), "version": LLAMA_CPP_VERSION,
        "cmake_args": recipe(), "lib_sha256": _sha256(lib), "wheel": wheel.name}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-recipe", action="store_true", help="print baseline, key and CMake flags")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the installed build matches")
    args = parser.parse_args(argv)
    if args.print_recipe:
        print(json.dumps({"baseline": baseline(), "key": recipe_key(), "cmake_args": recipe()}, indent=1))
        return 0
    if args.check:
        ok, why = installed_matches()
        print("ok" if ok else why)
        return 0 if ok else 1
    ensure_installed()
    return 0


if __name__ == "__main__":
    sys.exit(main())
