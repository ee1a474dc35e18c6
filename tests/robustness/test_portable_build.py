"""The bundled model server's llama.cpp build is portable (issue 11).

1. The installed ``libggml-cpu`` contains no instruction beyond the stated baseline: no AMX tile
   instructions and no AVX-512 (``zmm`` or mask registers) - what killed the server with SIGILL on a VM
   whose CPU reports AMX but does not allow it.
2. Because a native build on a CPU *without* AVX-512 contains none of those either, the recipe itself is
   checked: setup builds with ``GGML_NATIVE=OFF`` and the forbidden features off, and the installed library
   is the one that recipe built (the stamp's hash), not a wheel pip took from its cache.
"""

from __future__ import annotations

import importlib.util
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("llama_build", REPO / "scripts" / "llama_build.py")
assert spec and spec.loader
llama_build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(llama_build)

X86 = platform.machine().lower() in ("x86_64", "amd64")
#: AMX tile instructions, AVX-512 registers (zmm, opmask k1-k7), EVEX-only AVX-512 mnemonics.
BEYOND_BASELINE = re.compile(r"\b(tileloadd\w*|tilestored|tilezero|tdpb\w+|ldtilecfg|sttilecfg|tilerelease)\b"
                             r"|%zmm\d|%k[1-7]\b|\{%k[0-7]\}")


def test_recipe_is_not_native_and_excludes_avx512_and_amx() -> None:
    flags = llama_build.recipe()
    assert "-DGGML_NATIVE=OFF" in flags
    assert "-DGGML_CPU_ALL_VARIANTS=OFF" in flags  # runtime selection would pick the AMX variant on such a VM
    if X86:
        for feature in llama_build.X86_FORBIDDEN:
            assert f"-DGGML_{feature}=OFF" in flags
        assert not any(f.endswith("=ON") and ("AVX512" in f or "AMX" in f) for f in flags)
        assert llama_build.baseline() in ("x86-64-v3", "x86-64")


def test_recipe_version_is_the_pinned_one() -> None:
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    pin = next(d for d in deps if d.startswith("llama-cpp-python"))
    assert pin.endswith(f"=={llama_build.LLAMA_CPP_VERSION}")


def test_setup_installs_through_the_recipe_before_the_project() -> None:
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert setup.index("scripts/llama_build.py") < setup.index('-e ".[test]"')
    assert "--check" in setup  # and re-checks after the project install


def test_installed_build_is_the_one_the_recipe_made() -> None:
    ok, why = llama_build.installed_matches()
    assert ok, f"{why}: run scripts/setup.sh"


@pytest.mark.skipif(not X86, reason="x86-64 instruction check")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) not installed")
def test_installed_cpu_library_has_no_instructions_beyond_baseline() -> None:
    libs = llama_build.installed_libraries()
    assert any(p.name.startswith("libggml-cpu") for p in libs), libs
    for lib in libs:
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                             check=True).stdout
        assert len(dis) > 1000
        found = sorted({m.group(0) for m in BEYOND_BASELINE.finditer(dis)})
        assert not found, f"{lib.name} uses {found[:10]}: not portable, re-run scripts/setup.sh"


def test_stamp_mismatch_is_detected(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A library replaced after setup (e.g. by a natively built wheel from pip's cache) is reported, so
    re-running setup reinstalls the portable wheel."""
    real = llama_build.cpu_library()
    assert real is not None
    fake_lib = tmp_path / "libggml-cpu.so"
    fake_lib.write_bytes(b"native build")
    monkeypatch.setattr(llama_build, "cpu_library", lambda: fake_lib)
    ok, why = llama_build.installed_matches()
    assert not ok and "differs" in why
    monkeypatch.setattr(llama_build, "stamp_path", lambda: tmp_path / "missing.json")
    ok, why = llama_build.installed_matches()
    assert not ok and "no build stamp" in why


def test_check_command_exit_status() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "llama_build.py"), "--check"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
