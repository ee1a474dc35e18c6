"""Research code, not shipped (issue 45, stop 69): topic membership by reading, a MiniLM cross-encoder that reads
the topic with what a candidate paper says it is about, combined with the retrieval features of the shipped
classifier (assistant/understand/learned.py ``topic_features``).

Measured on the frozen eval/topics-1.jsonl validation questions it did not beat the shipped classifier
(docs/results/issue45/README.md, "Stop 69"), so the product does not use it. The model is rebuilt into
``build/membership-model`` by ``scripts/train_membership.py`` (then ``--combiner``).

The cross-encoder reads one pair per candidate: the topic, and :func:`membership_text` of the paper (its title, the
sentence that states its contribution and the sentence that best matches the topic).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from assistant.lang.text import states_contribution

if TYPE_CHECKING:
    from assistant.types import PaperHit


#: The labelled (topic, paper) pairs, gzipped JSON lines (scripts/topic_membership_data.py merge writes them).
LABELLED = Path(__file__).resolve().parent / "training-data" / "membership.jsonl.gz"


def read_labelled(path: Path = LABELLED) -> list[dict]:
    """Every labelled pair of ``path`` (``.gz`` or plain JSON lines), in file order."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


#: Where scripts/train_membership.py writes the model (not committed: 23 MB, and not shipped).
MODEL_DIR = Path(__file__).resolve().parents[1] / "build" / "membership-model"

#: The features the membership decision combines for each candidate (:func:`membership_features`): how far its best
#: evidence sentence scores below the best candidate's, how far its second-best does, the share of the topic's word
#: stems in its abstract and in its title, and the cross-encoder's logit for it.
FEATURES = ("below_top_evidence", "second_below_top", "topic_words_in_text", "topic_words_in_title", "reading_logit")

#: Words kept of each sentence in :func:`membership_text` (the pair must fit the model's 192 word pieces).
SENTENCE_WORDS = 45


def _clip(sentence: str, words: int = SENTENCE_WORDS) -> str:
    parts = sentence.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def membership_text(title: str, sentences: Sequence[str], scores: Sequence[float]) -> str:
    """What the membership model reads of one paper: ``title``, then the first sentence that states the paper's
    contribution ("we propose …"; the first sentence when none does), then the sentence with the best ``scores``
    entry (its match to the topic; ``scores[i]`` belongs to ``sentences[i]``) when it is another one. Each sentence is
    clipped to :data:`SENTENCE_WORDS` words.

    Returns one string, e.g. ``"DUALFormer: Dual Graph Transformer. We propose … . Experiments on …"``."""
    if not sentences:
        return title.strip()
    lead = next((i for i, s in enumerate(sentences) if states_contribution(s)), 0)
    parts = [title.strip().rstrip(".") + ".", _clip(sentences[lead])]
    if scores:
        best = max(range(min(len(scores), len(sentences))), key=lambda i: scores[i])
        if best != lead:
            parts.append(_clip(sentences[best]))
    return " ".join(p for p in parts if p)


class MembershipModel:
    """The trained membership cross-encoder (int8 ONNX, onnxruntime on CPU) and the decision that combines its
    reading with the retrieval features (:meth:`member_probabilities`).

    Args:
        folder: holds ``model.onnx``, ``tokenizer.json`` and ``membership.json`` (``threshold``: the cross-encoder's
            own, for its held-out figures; ``max_length``; ``combiner``: the weights of :data:`FEATURES`, the
            intercept and the decision threshold).

    Raises:
        ConfigError: a file is missing or unreadable (it names the folder and how to rebuild it).
    """

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from assistant.errors import ConfigError

        try:
            meta = json.loads((folder / "membership.json").read_text(encoding="utf-8"))
            self.threshold = float(meta["threshold"])
            c = meta.get("combiner")  # absent only while scripts/train_membership.py builds the model
            if c is not None and tuple(c["features"]) != FEATURES:
                raise ValueError(f"combiner features {c['features']} are not {list(FEATURES)}")
            self.coef = np.asarray(c["coef"], dtype=np.float64) if c else None
            self.intercept = float(c["intercept"]) if c else 0.0
            self.decision_threshold = float(c["threshold"]) if c else 1.0
            self.folder = folder
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1  # a list is one request among others on a 2-core laptop
            options.inter_op_num_threads = 1
            self.session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        except Exception as e:  # OSError, KeyError, ValueError, and onnxruntime's own types
            raise ConfigError(f"{folder}: no readable membership model ({e}); see scripts/train_membership.py") from e
        self.tokenizer.enable_truncation(max_length=int(meta["max_length"]), strategy="only_second")
        self.tokenizer.enable_padding()
        self._inputs = {i.name for i in self.session.get_inputs()}

    @classmethod
    @lru_cache(maxsize=4)
    def load(cls, folder: Path = MODEL_DIR) -> MembershipModel:
        """The model in ``folder`` (default ``build/membership-model``), read once per process."""
        return cls(Path(folder))

    def probabilities(self, topics: Sequence[str], texts: Sequence[str], batch: int = 32) -> np.ndarray:
        """P(member) in [0, 1], shape ``(len(texts),)``: ``texts[i]`` (:func:`membership_text` of a paper) read with
        ``topics[i]`` (the topic as asked, without the question's frame)."""
        out = np.zeros(len(texts), dtype=np.float32)
        for b in range(0, len(texts), batch):
            enc = self.tokenizer.encode_batch(list(zip(topics[b : b + batch], texts[b : b + batch])))
            feed = {
                "input_ids": np.asarray([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in enc], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in enc], dtype=np.int64),
            }
            logits = self.session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0][:, 0]
            out[b : b + batch] = 1.0 / (1.0 + np.exp(-logits))
        return out

    def member_probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(member), shape ``(n,)``, from ``features`` ``(n, len(FEATURES))`` (:func:`membership_features`): the
        logistic combination fitted by ``scripts/train_membership.py --combiner``."""
        if self.coef is None:
            from assistant.errors import ConfigError

            raise ConfigError(
                f"{self.folder / 'membership.json'} has no combined decision; fit it with "
                "scripts/train_membership.py --combiner (docs/models/membership.md)."
            )
        if len(features) == 0:
            return np.zeros(0)
        return 1.0 / (1.0 + np.exp(-(np.asarray(features, dtype=np.float64) @ self.coef + self.intercept)))

    def logits(self, topics: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """The cross-encoder's logit for each pair, shape ``(len(texts),)`` (P = sigmoid of it)."""
        p = np.clip(self.probabilities(topics, texts).astype(np.float64), 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))


def retrieval_features(topic: str, hits: Sequence[PaperHit]) -> np.ndarray:
    """``(len(hits), 4)``: the first four :data:`FEATURES`, the shipped classifier's own
    (:func:`assistant.understand.learned.topic_features`)."""
    from assistant.understand.learned import topic_features

    return topic_features(topic, hits)


def membership_features(topic: str, hits: Sequence[PaperHit], model: MembershipModel | None = None) -> np.ndarray:
    """``(len(hits), len(FEATURES))``: :func:`retrieval_features` and the cross-encoder's logit for each candidate
    (read as :func:`membership_text` of its title and sentences, scored for ``topic`` by ``hit.sentence_scores``)."""
    model = model or MembershipModel.load()
    texts = [membership_text(h.paper.title, h.sentences, h.sentence_scores or ()) for h in hits]
    reading = model.logits([topic] * len(hits), texts) if hits else np.zeros(0)
    return np.column_stack([retrieval_features(topic, hits), reading]).astype(np.float32)
