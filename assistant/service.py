"""The Assistant facade and ``build_assistant(settings)``, the one place that wires concrete classes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING

from assistant.answer.answerer import Answerer, AnswerEvent
from assistant.conversation.session import ChatSession
from assistant.errors import AssistantError, LLMUnavailableError
from assistant.llm.client import ChatBackend, Message, OpenAIChatBackend
from assistant.types import Answer, Intent, Page
from assistant.understand.question import MAX_QUESTION_CHARS, EmptyQuestionError, QuestionTooLongError, clean_question

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from assistant.answer.strategies import IntentStrategy
    from assistant.config import Settings
    from assistant.index.embeddings import CachedEmbedder
    from assistant.index.store import PaperStore
    from assistant.llm.local import LocalLLMServer
    from assistant.llm.read_ahead import ReadAhead
    from assistant.retrieve.retrieval import PaperRetriever

logger = logging.getLogger(__name__)

#: torch threads while answering: the bundled model server decodes on another core, and two torch threads
#: competing with it made one sentence embedding take ~500 ms instead of ~25 ms (docs/measurements.md).
ANSWER_TORCH_THREADS = 1
__all__ = [
    "MAX_QUESTION_CHARS",
    "Assistant",
    "EmptyQuestionError",
    "QuestionTooLongError",
    "build_assistant",
    "build_retriever",
    "clean_question",
]


class UnavailableBackend:
    """Stands in for a model that cannot run (e.g. the bundled server crashed at its self-check): every
    :meth:`stream` raises :class:`LLMUnavailableError` with ``message``, so each answer is the cited
    extractive one with that message as its notice."""

    def __init__(self, model: str, message: str, reason: str = "crashed") -> None:
        self.model = model
        self._message = message
        self._reason = reason

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        """Raises LLMUnavailableError at once (a generator, like the real backends)."""
        raise LLMUnavailableError(self._message, reason=self._reason)
        yield ""  # pragma: no cover - makes this a generator

    def yes_probability(self, messages: Sequence[Message]) -> float:
        """Raises LLMUnavailableError at once."""
        raise LLMUnavailableError(self._message, reason=self._reason)


class BundledChatBackend:
    """OpenAI client to the bundled model server; restarts the server if it died (e.g. killed mid-answer),
    unless it crashed at its start-up self-check (then every call fails at once, see LocalLLMServer.broken)."""

    def __init__(self, server: LocalLLMServer, settings: Settings) -> None:
        self._server = server
        self._settings = settings
        self.model = server.model
        self._client: OpenAIChatBackend | None = None
        self._url = ""
        self._lock = threading.Lock()
        self._connect_lock = threading.Lock()
        self._closed = False
        self._in_flight = 0
        self._last_done = time.monotonic()

    def close(self) -> None:
        """No more requests: every later call raises :class:`LLMUnavailableError` instead of (re)starting the
        server (the assistant is closing)."""
        with self._connect_lock:
            self._closed = True

    def idle_s(self) -> float:
        """Seconds since the last request to the model finished; 0.0 while one is in flight (what the read-ahead
        waits on: :mod:`assistant.llm.read_ahead`)."""
        with self._lock:
            return 0.0 if self._in_flight else time.monotonic() - self._last_done

    @contextmanager
    def _request(self) -> Iterator[None]:
        """Counts a request in flight for :meth:`idle_s`."""
        with self._lock:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                self._last_done = time.monotonic()

    def _connected(self) -> OpenAIChatBackend:
        """The client to the running server (started, or restarted after it died). Raises LLMUnavailableError."""
        with self._connect_lock:  # an answer and the read-ahead never start two servers
            if self._closed:
                raise LLMUnavailableError("The assistant was closed.", reason="cancelled")
            self._server.ensure_running()
        if self._client is None or self._url != self._server.base_url:
            self._url = self._server.base_url
            s = self._settings
            self._client = OpenAIChatBackend(
                self._url,
                "not-needed",
                self.model,
                temperature=s.llm.temperature,
                max_output_tokens=s.llm.max_output_tokens,
                timeout_s=s.llm.timeout_s,
            )
        return self._client

    def yes_probability(self, messages: Sequence[Message]) -> float:
        """See :meth:`OpenAIChatBackend.yes_probability`. Raises LLMUnavailableError."""
        with self._request():
            return self._connected().yes_probability(messages)

    def stream(self, messages: Sequence[Message], max_tokens: int | None = None) -> Iterator[str]:
        """Yield reply deltas (see :meth:`OpenAIChatBackend.stream`).

        Raises:
            LLMUnavailableError: the server cannot be (re)started, or the stream failed; when the server
                died during the stream, the message names how (signal) and the next call restarts it.
        """
        with self._request():
            client = self._connected()
            try:
                yield from client.stream(messages, max_tokens)
            except LLMUnavailableError as e:
                time.sleep(0.05)  # let a dying server's exit status arrive
                died = self._server.exit_description()
                if died:
                    raise LLMUnavailableError(
                        f"{died.rstrip('.')} in the middle of the answer; it is restarted for the next question.",
                        reason="crashed",
                    ) from e
                raise


class Assistant:
    """What entry points use: ask/stream questions, and stop the bundled model on close.

    Args:
        answerer: the question-answering pipeline.
        retriever: exposed for evaluation (retrieval-only runs) and stats.
        model_label: shown to users as "answered by".
        settings: the settings it was built with (read by evaluation and entry points).
        llm_server: the bundled model server this assistant owns, if any.
    """

    def __init__(
        self,
        answerer: Answerer,
        retriever: PaperRetriever,
        model_label: str,
        settings: Settings,
        llm_server: LocalLLMServer | None = None,
    ) -> None:
        self.answerer = answerer
        self.retriever = retriever
        self.settings = settings
        self.model_label = model_label
        self._llm_server = llm_server
        self.read_ahead: ReadAhead | None = None
        self._read_ahead_backend: BundledChatBackend | None = None

    def start_read_ahead(self, backend: BundledChatBackend) -> None:
        """Read every indexed paper into ``backend``'s prompt cache in the background, when there are at most
        ``llm.read_ahead_papers`` of them (:class:`assistant.llm.read_ahead.ReadAhead`; progress in
        :attr:`read_ahead`); nothing when there are more or the setting is 0."""
        from assistant.llm.read_ahead import ReadAhead

        if not 0 < self.paper_count <= self.settings.llm.read_ahead_papers:
            return
        papers = self.retriever.papers

        def sources() -> list[tuple[str, str]]:
            return [(p.title, p.text) for p in (papers[pid] for pid in papers)]

        self.read_ahead = ReadAhead(backend, sources).start()
        self._read_ahead_backend = backend

    def stream(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Iterator[AnswerEvent]:
        """Stream the answer to one stand-alone question (``page``: which papers of a topic listing): the first turn
        of a new conversation (:meth:`ChatSession.stream`). Raises EmptyQuestionError or QuestionTooLongError before
        any search."""
        yield from self.new_session().stream(question, intent, page)

    def explain(self, error: BaseException) -> AssistantError | None:
        """A one-line, user-facing error for a failure whose cause is known (a read-only or full disk under
        the index, a vector-size mismatch; :func:`assistant.index.store.explain_failure`), else None."""
        from assistant.index.store import explain_failure

        return explain_failure(error, self.settings)

    def ask(self, question: str, intent: Intent | None = None, page: Page | None = None) -> Answer:
        """The final answer to one stand-alone question (:meth:`stream`). Raises EmptyQuestionError or
        QuestionTooLongError."""
        return self.new_session().ask(question, intent, page)

    def new_session(self) -> ChatSession:
        """A fresh conversation (one per chat window / CLI session)."""
        return ChatSession(self.answerer, self.retriever.papers)

    @property
    def paper_count(self) -> int:
        """Number of indexed papers."""
        return len(self.retriever.papers)

    def close(self) -> None:
        """Stop reading ahead and the bundled model server, if this assistant started one (a reading under way is
        cut off, not waited for; the model is not restarted for it)."""
        if self.read_ahead is not None:
            self.read_ahead.stop(timeout_s=0)
        if self._read_ahead_backend is not None:
            self._read_ahead_backend.close()
        if self._llm_server is not None:
            self._llm_server.stop()

    def __enter__(self) -> Assistant:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def check_reader_model(store: PaperStore, settings: Settings, embed: BaseEmbedding) -> None:
    """The model that will embed questions makes the index's vectors: same vector size and, where the index
    recorded one, the same vector for the probe sentence (one embedding, ~10 ms). A model folder whose contents
    were swapped (e.g. for a 768-dimensional model) is caught here, at start-up, in one line — not as Chroma's
    dimension error on every question.

    Raises:
        StoreNotReadyError: names the index, both models' vector sizes and what to do.
    """
    from assistant.index.store import PROBE_TEXT, store_info

    store.check_info(store_info(settings, embed.get_text_embedding(PROBE_TEXT)))


def build_retriever(
    settings: Settings, embed_model: BaseEmbedding | None = None, sentence_embedder: CachedEmbedder | None = None
) -> tuple[PaperRetriever, CachedEmbedder]:
    """Open the index and build the paper retriever and the cached sentence embedder that answering (and
    ``eval-claims``) verify with; torch is set to :data:`ANSWER_TORCH_THREADS` threads for answering.
    ``sentence_embedder``: reuse a cached embedder of the same model (its vectors stay valid across indexes).

    Raises:
        StoreNotReadyError: no index for these settings (run ``assistant ingest``).
    """
    import sys

    from assistant.index.store import require_existing_storage, start_loading_vectors

    require_existing_storage(settings)
    loading = start_loading_vectors(settings)  # overlaps Chroma's index load with the imports below

    from assistant.index.catalog import open_catalog
    from assistant.index.embeddings import CachedEmbedder, build_embed_model
    from assistant.index.store import PaperStore
    from assistant.ingest.steering import check_withheld
    from assistant.retrieve.retrieval import PaperRetriever

    store = PaperStore.open_for_read(settings)
    catalog = open_catalog(settings, store, withheld_check=check_withheld)
    embed = embed_model or build_embed_model(settings)
    check_reader_model(store, settings, embed)
    if "torch" in sys.modules:  # the torch runtime: answering embeds short texts (never imported just for this)
        sys.modules["torch"].set_num_threads(ANSWER_TORCH_THREADS)
    embedder = sentence_embedder or CachedEmbedder(embed)
    retriever = PaperRetriever(store, catalog, embed, settings, sentence_embedder=embedder)
    if loading is not None:
        loading.join()
    return retriever, embedder


def build_assistant(
    settings: Settings,
    *,
    embed_model: BaseEmbedding | None = None,
    backend: ChatBackend | None = None,
    llm_server: LocalLLMServer | None = None,
    strategies: Mapping[str, IntentStrategy] | None = None,
    sentence_embedder: CachedEmbedder | None = None,
    start_llm: bool = True,
    read_ahead: bool = False,
) -> Assistant:
    """Open the index, build the retriever, connect (or start) the LLM.

    Args:
        settings: the one settings object.
        embed_model: reuse an already-loaded embedding model (else built from settings).
        backend: a chat backend to use instead of the configured endpoint (tests, evaluation).
        llm_server: a not-yet-started server to use as the "bundled" one (tests: scripted servers).
        strategies: the intent registry (default :data:`assistant.answer.strategies.STRATEGIES`).
        sentence_embedder: reuse a cached sentence embedder of ``embed_model`` (tests share one).
        start_llm: start the bundled model server now (the UI: the first answer does not wait for it, and a
            server that cannot run is known up front). False (``assistant ask``): start it only when an
            answer calls the model, so questions answered by code (topic lists, summaries with the small
            model) never start it; a server that cannot run then gives the same extractive answer.
        read_ahead: with the bundled model started and at most ``llm.read_ahead_papers`` papers indexed, read every
            paper into its prompt cache in the background while no answer asks the model
            (:class:`assistant.llm.read_ahead.ReadAhead`; the long-running entry points: the UI and ``serve``).

    If the bundled model server cannot start (missing model, crash at its self-check, e.g. SIGILL), this
    logs one line and the assistant keeps answering extractively: every answer cited, its ``notice``
    saying why no model was used.

    Raises:
        StoreNotReadyError: no index for these settings (run ``assistant ingest``).
    """
    from assistant.llm.local import LocalLLMServer

    retriever, embedder = build_retriever(settings, embed_model, sentence_embedder)
    server = None
    if backend is None:
        if settings.uses_bundled_llm or llm_server is not None:
            server = llm_server or LocalLLMServer(
                n_ctx=settings.llm.ctx_tokens,
                n_threads=settings.llm.threads,
                prompt_cache_mb=settings.llm.prompt_cache_mb,
                prompt_state_disk_mb=settings.llm.prompt_state_disk_mb,
                bundled=settings.llm.bundled,
                cache_dir=settings.embedding.model_cache_dir,
            )
            label = f"{server.model} (bundled, local)"
            try:
                if start_llm:
                    server.start()
                backend = BundledChatBackend(server, settings)
            except LLMUnavailableError as e:
                first_line = str(e).splitlines()[0]
                logger.error("%s Answers will be extractive (cited passages, no model).", first_line)
                backend = UnavailableBackend(server.model, first_line, e.reason)
                label = "no model (the bundled model could not run)"
        else:
            assert settings.llm.base_url
            backend = OpenAIChatBackend(
                settings.llm.base_url,
                settings.llm.api_key.get_secret_value(),
                settings.llm.model,
                temperature=settings.llm.temperature,
                max_output_tokens=settings.llm.max_output_tokens,
                timeout_s=settings.llm.timeout_s,
            )
            label = f"{settings.llm.model} at {settings.llm.base_url}"
    else:
        label = backend.model
    answerer = Answerer(retriever, backend, embedder, settings, strategies=strategies)
    from assistant.understand.language import warm

    warm()  # the language identifier (about 1 s), now rather than at the first question
    assistant = Assistant(answerer, retriever, label, settings, server)
    if read_ahead and isinstance(backend, BundledChatBackend) and server is not None and server.is_running():
        assistant.start_read_ahead(backend)
    return assistant
