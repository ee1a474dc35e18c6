"""Start and stop a bundled model (GGUF, :mod:`assistant.llm.bundled`) behind llama-cpp-python's
OpenAI-compatible server.

Command line and sizes from docs/measurements.md (first measured for docs/offline-stack.md), run through
:mod:`assistant.llm.bundled_server` (llama-cpp-python's server with a prompt cache that keeps states, not logits):
``python -m assistant.llm.bundled_server --model <gguf> --model_alias qwen1.5b --host 127.0.0.1 --port <free>
--n_ctx 4096 --n_threads 2 --interrupt_requests False`` (~1.5 s to start, ~530-830 MB RSS, plus the prompt cache).
``--interrupt_requests False``: llama-cpp-python's server otherwise cuts a running stream short, silently, when
another request arrives, so parallel chats would truncate each other's answers; with it, requests queue and each
one finishes.

After ``/v1/models`` answers, :meth:`LocalLLMServer.start` sends one tiny completion (the *self-check*): a
llama.cpp build that uses CPU instructions this machine does not allow dies there (SIGILL), and the
cause is reported in one line instead of failing every later answer.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from assistant.errors import LLMUnavailableError
from assistant.llm.bundled import bundled_model, gguf_path
from assistant.llm.bundled_server import STATE_DIR_FLAG, STATE_DIR_MB_FLAG

logger = logging.getLogger(__name__)


def bundled_gguf_path(name: str = "qwen1.5b", cache_dir: Path | None = None) -> Path:
    """Path of bundled model ``name``'s GGUF file (:func:`assistant.llm.bundled.gguf_path`; a split model is
    joined into ``cache_dir/gguf/`` on first use).

    Raises:
        LLMUnavailableError: the model's package or a part is missing, or the joined file is corrupt.
    """
    from assistant.config import PROJECT_ROOT

    return gguf_path(name, cache_dir if cache_dir is not None else PROJECT_ROOT / ".cache" / "models")


def prompt_state_dir(name: str, n_ctx: int, cache_dir: Path | None = None) -> Path:
    """Where the bundled model ``name``'s server keeps read prompts across restarts (its disk prompt cache,
    :mod:`assistant.llm.bundled_server`): ``cache_dir/states/<name>-ctx<n_ctx>`` (default cache_dir
    ``.cache/models``), one directory per model and context size, since a state is only valid for those."""
    from assistant.config import PROJECT_ROOT

    root = cache_dir if cache_dir is not None else PROJECT_ROOT / ".cache" / "models"
    return root / "states" / f"{name}-ctx{n_ctx}"


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when the parent dies (even by SIGKILL), so a
    killed app never leaves the model server running (prctl PR_SET_PDEATHSIG = 1)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def describe_exit(returncode: int | None) -> str:
    """One line naming why the server process ended: ``"killed by SIGILL (...)"`` or ``"exited with code 1"``.

    For SIGILL the line says what to do: the llama.cpp build uses CPU instructions this machine does not
    allow (e.g. AVX-512/AMX on a VM), so ``scripts/setup.sh`` must be re-run to install the portable build.
    """
    if returncode is None:
        return "is still running"
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    if name == "SIGILL":
        return (
            "was killed by SIGILL: the llama.cpp build uses CPU instructions this machine does not allow; "
            "re-run scripts/setup.sh to install the portable build"
        )
    return f"was killed by {name}"


def decode_threads(threads: int) -> int:
    """Threads for token-by-token decoding given ``threads`` for the prompt: half, at least 1.

    Measured on 2 cores (docs/measurements.md): with another busy core, 2 decode threads ran at 11-29
    tokens/s and 1 thread at 34-63; on a quiet machine both were within noise of each other."""
    return max(1, threads // 2)


def free_port(host: str = "127.0.0.1") -> int:
    """An unused TCP port on ``host`` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """The bundled model served on loopback; use as a context manager or call start()/stop().

    Args:
        n_ctx: context window in tokens; n_threads: CPU threads; prompt_cache_mb: MiB of RAM for read prompts
        (llama-cpp-python's ``--cache`` RAM cache, matched by longest token prefix: a paper's reading is reused by
        every later question about it; 0: off); prompt_state_disk_mb: MiB of disk that keeps them across restarts
        (0: off; needs the RAM cache on), in ``prompt_state_dir`` (default :func:`prompt_state_dir`);
        startup_timeout_s: seconds to wait
        for ``GET /v1/models`` to answer (the 1.5B model loads in ~2 s warm, ~45 s from a cold disk cache);
        bundled: which bundled model (``qwen1.5b``); cache_dir: where its parts are joined.

    Raises:
        LLMUnavailableError: ``bundled`` is not a bundled model's name.
    """

    def __init__(
        self,
        *,
        n_ctx: int = 4096,
        n_threads: int = 2,
        prompt_cache_mb: int = 0,
        prompt_state_disk_mb: int = 0,
        prompt_state_dir: Path | None = None,
        startup_timeout_s: float = 90.0,
        command: list[str] | None = None,
        bundled: str = "qwen1.5b",
        cache_dir: Path | None = None,
    ) -> None:
        self.host = "127.0.0.1"
        self.port = 0
        #: The bundled model served (:data:`assistant.llm.bundled.BUNDLED`); unknown names fail here.
        self.bundled = bundled_model(bundled)
        self.model = self.bundled.alias
        self._cache_dir = cache_dir
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._prompt_cache_mb = prompt_cache_mb
        self._prompt_state_disk_mb = prompt_state_disk_mb
        self._prompt_state_dir = prompt_state_dir
        self._timeout = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._command = command  # tests: another OpenAI-compatible server script; "{port}" is replaced
        #: Set when the server crashed at its self-check: restarting would crash again, so it is not retried.
        self.broken: str = ""
        self._log = tempfile.NamedTemporaryFile(prefix="assistant-llm-", suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> LocalLLMServer:
        """Start the server and wait until it answers.

        Raises:
            LLMUnavailableError: the model file is missing, or the server exits or does not answer in time
                (message includes the end of its log), or it dies at the self-check (``reason="crashed"``,
                message names the signal; :attr:`broken` is set and later restarts are refused).
        """
        if self.broken:
            raise LLMUnavailableError(self.broken, reason="crashed")
        self.port = free_port(self.host)
        if self._command is not None:
            cmd = [part.replace("{port}", str(self.port)) for part in self._command]
        else:
            gguf = bundled_gguf_path(self.bundled.name, self._cache_dir)
            cmd = [
                sys.executable,
                "-m",
                "assistant.llm.bundled_server",  # llama_cpp.server; its cache keeps states, not logits
                "--model",
                str(gguf),
                "--model_alias",
                self.model,
                "--host",
                self.host,
                "--port",
                str(self.port),
                "--n_ctx",
                str(self._n_ctx),
                # prompt (batched) on all threads; token-by-token decode on half of them: two spinning decode
                # threads collapse when the app's own verification work takes a core (docs/measurements.md)
                "--n_threads",
                str(decode_threads(self._n_threads)),
                "--n_threads_batch",
                str(self._n_threads),
                "--verbose",
                "False",
                "--interrupt_requests",
                "False",
            ]
            if self._prompt_cache_mb > 0:
                cmd += ["--cache", "True", "--cache_type", "ram", "--cache_size", str(self._prompt_cache_mb << 20)]
                if self._prompt_state_disk_mb > 0:
                    state_dir = self._prompt_state_dir or prompt_state_dir(
                        self.bundled.name, self._n_ctx, self._cache_dir
                    )
                    cmd += [STATE_DIR_FLAG, str(state_dir), STATE_DIR_MB_FLAG, str(self._prompt_state_disk_mb)]
        logger.info("starting bundled LLM server on %s", self.base_url)
        t0 = time.monotonic()
        self._proc = subprocess.Popen(
            cmd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        while time.monotonic() - t0 < self._timeout:
            if self._proc.poll() is not None:
                code, self._proc = self._proc.returncode, None
                if code < 0:  # killed by a signal while loading: restarting would fail the same way
                    self._give_up(code)
                raise LLMUnavailableError(f"The bundled LLM server {describe_exit(code)}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    ready = r.status == 200
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                ready = False
            if ready:
                self._self_check()
                logger.info("bundled LLM ready in %.1f s", time.monotonic() - t0)
                return self
            time.sleep(0.2)
        self.stop()
        raise LLMUnavailableError(
            f"The bundled LLM server did not answer within {self._timeout:.0f} s:\n{self.log_tail()}"
        )

    def _self_check(self) -> None:
        """One 1-token completion; if the process dies doing it, stop for good and say why (one line)."""
        body = json.dumps(
            {
                "model": self.model,
                "max_tokens": 1,
                "temperature": 0,
                "messages": [{"role": "user", "content": "Say OK."}],
            }
        ).encode()
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as r:
                r.read()
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
            error = e
        assert self._proc is not None
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            logger.warning("bundled LLM self-check failed (%s) but the server is still running", error)
            return
        code, self._proc = self._proc.returncode, None
        self._give_up(code)

    def _give_up(self, returncode: int) -> NoReturn:
        """Record that the server cannot run here (:attr:`broken`, no more restarts), log it once, raise."""
        self.broken = f"The bundled language model {describe_exit(returncode)}."
        logger.error("%s (server log: %s)", self.broken, self._log.name)
        raise LLMUnavailableError(self.broken, reason="crashed")

    def exit_description(self) -> str:
        """Why the server process is not running (see :func:`describe_exit`), or "" while it runs."""
        if self.broken:
            return self.broken
        if self._proc is None or self._proc.poll() is None:
            return ""
        return f"The bundled language model {describe_exit(self._proc.returncode)}."

    def is_running(self) -> bool:
        """True while the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def ensure_running(self) -> None:
        """Start the server if it was never started (``build_assistant(start_llm=False)``: at the first answer
        that calls the model), or restart it if its process died (the port may change)."""
        if not self.is_running():
            died = self.exit_description()
            if died and not self.broken:
                logger.warning("bundled LLM server is not running (%s); restarting it", died)
            self.start()

    def log_tail(self, n_chars: int = 2000) -> str:
        """Last ``n_chars`` of the server's combined stdout/stderr."""
        try:
            return Path(self._log.name).read_text(errors="replace")[-n_chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 5 s). Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
