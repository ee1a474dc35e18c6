"""Markup inside abstract text, read the same everywhere: formulas (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``)
and the display markup authors put in abstracts (``**bold**``, ``*italic*``, ``\\emph{x}``, ``\\%``). A leaf
module of the language package; the UI (``ui/text.py``) renders from these pieces, the terminal and other
plain-text outputs use :func:`plain_text`.

1. **Math is found first** (:func:`split_math`): a single ``$`` opens math only when a non-space follows it
   and closes it only when a non-space precedes it and no digit follows it (pandoc's rule), so dollar
   amounts ("$5 and $10") stay text; ``\\$`` is a literal dollar. A TeX comment in a formula (an unescaped
   ``%`` to its end) is dropped, as TeX drops it (``$11.25%$%`` reads "11.25%").
2. **Display markup outside math is dropped** (:func:`display_text`): ``**A**`` and ``*A*`` show ``A``,
   also inside a word (``**S**elective`` -> ``Selective``); ``\\emph{x}``-style text commands show their
   content; ``\\%``, ``\\$``, ``\\&``, ``\\#``, ``\\_`` show the character; a TeX tie after a word
   (``Models~(LLMs)``) is a space.
3. **Plain text** (:func:`plain_text`, the terminal): 2, and each formula as a reader would type it when it
   can be (``$\\underline{Le}$`` -> ``Le``, ``$\\pm 3$`` -> ``± 3``, ``$11.25\\%$`` -> ``11.25%``), else
   its ``$…$`` source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DISPLAY = [
    # a TeX tie after a word or an abbreviation ("Models~(LLMs)", "et al.~[2010]", "i.e.~for") is a space; a tilde
    # after a digit, a bracket or a space means "about" or "to" ("(~60 Hz)", "11x~43x") and stays
    (re.compile(r"(?<![\w.\\])((?:[A-Za-z]+\.)+|[A-Za-z]+)~+(?=\S)"), r"\1 "),
    (re.compile(r"\*\*(\S(?:.*?\S)??)\*\*"), r"\1"),  # **bold**; ?? = shortest: "**S**elective **A**ttention"
    (re.compile(r"(?<![\w*])\*(\S(?:.*?\S)??)\*(?![\w*])"), r"\1"),  # *italic*; ?? likewise
    (re.compile(r"\\(?:emph|textit|textbf|texttt|textrm|textsc|underline|mathrm|text)\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\([%&$#_{}])"), r"\1"),  # \% -> %
]
# $$…$$ | \[…\] | \(…\) | $…$ (opening: not after a backslash, non-space after; closing: non-space before,
# no digit after)
#: One formula, in any of the four delimiters (groups ``dd``, ``db``, ``ip``, ``id``: its TeX source).
MATH = re.compile(
    r"(?<!\\)\$\$(?P<dd>.+?)(?<!\\)\$\$"
    r"|\\\[(?P<db>.+?)\\\]"
    r"|\\\((?P<ip>.+?)\\\)"
    r"|(?<![\\$])\$(?P<id>[^\s$](?:[^$]*?[^\s\\$])?)\$(?![\d$])",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Segment:
    """A piece of text: ``math`` True for a formula (``text`` is its TeX source, without delimiters);
    ``display`` for ``$$…$$`` / ``\\[…\\]``."""

    text: str
    math: bool = False
    display: bool = False


def collapse(text: str) -> str:
    """Whitespace runs (newlines included) as one space, ends stripped."""
    return " ".join(text.split())


#: A TeX comment inside a formula: an unescaped ``%`` and the rest of the formula (``$11.25%$%`` shows "11.25%").
_TEX_COMMENT = re.compile(r"(?<!\\)%.*$", re.DOTALL)


def split_math(text: str) -> list[Segment]:
    """``text`` as text and math segments (module rule 1), whitespace collapsed; adjacent text merged. A formula's
    TeX comment (an unescaped ``%`` to its end) is dropped, as TeX and the OpenReview page drop it: ``$11.25%$%``
    reads "11.25%"; a formula that was only a comment is dropped."""
    text = collapse(text)
    out: list[Segment] = []
    pos = 0
    for m in MATH.finditer(text):
        if m.start() > pos:
            out.append(Segment(text[pos : m.start()]))
        tex = _TEX_COMMENT.sub("", next(g for g in m.groups() if g is not None)).strip()
        if tex:
            out.append(Segment(tex, True, m.group("dd") is not None or m.group("db") is not None))
        pos = m.end()
    if pos < len(text):
        out.append(Segment(text[pos:]))
    merged: list[Segment] = []
    for seg in out:  # text around a dropped formula is one piece
        if merged and not seg.math and not merged[-1].math:
            merged[-1] = Segment(merged[-1].text + seg.text)
        else:
            merged.append(seg)
    return merged


#: A formula that only styles a piece of text (``$\underline{Le}$arning``, ``$\textbf{G}$``, ``$\texttt{gpt2}$``):
#: the command and the text.
_TEXT_STYLE = re.compile(
    r"\\(underline|textbf|mathbf|textit|emph|mathit|texttt|text|textrm|textsc|mathrm|mathsf)\s*"
    r"\{([A-Za-z0-9][A-Za-z0-9 .,:;()'/+-]*)\}"
)
_STYLE_OF = {"underline": "underline", "textbf": "bold", "mathbf": "bold", "textit": "italic", "emph": "italic",
             "mathit": "italic", "texttt": "mono"}  # fmt: skip


def text_style(tex: str) -> tuple[str, str] | None:
    """``(style, text)`` when formula ``tex`` only styles plain text (letters, digits, spaces, light punctuation):
    style ``underline``, ``bold``, ``italic``, ``mono`` or ``plain``; else None. Such a formula is text in a
    formula's clothes (``$\\underline{Le}$arning``: "Learning" with "Le" underlined), shown as styled text rather
    than typeset as math, which would set it in math italics in the middle of a word."""
    m = _TEXT_STYLE.fullmatch(tex.strip())
    return (_STYLE_OF.get(m.group(1), "plain"), m.group(2)) if m else None


def display_text(text: str) -> str:
    """Display markup of a text segment dropped (module rule 2): ``**A**`` -> ``A``, ``\\emph{x}`` -> ``x``."""
    for pattern, repl in _DISPLAY:
        text = pattern.sub(repl, text)
    return text


_TEX_SYMBOLS = {
    "pm": "±", "mp": "∓", "times": "×", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "approx": "≈", "sim": "~", "neq": "≠", "ne": "≠", "ll": "≪", "gg": "≫", "infty": "∞", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "in": "∈", "ell": "ℓ", "propto": "∝", "partial": "∂", "nabla": "∇",
    "sum": "Σ", "prod": "∏", "log": "log", "exp": "exp", "max": "max", "min": "min", "dots": "…", "ldots": "…",
    "cdots": "…", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_", "{": "{", "}": "}", ",": " ", ";": " ",
    "!": "", " ": " ", "quad": " ", "qquad": " ",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Phi": "Φ",
    "Psi": "Ψ", "Omega": "Ω",
}  # fmt: skip
#: Commands whose braced argument is shown as it is (fonts, decorations, text).
_TEX_WRAPPERS = re.compile(
    r"\\(?:underline|overline|textit|textbf|texttt|textrm|textsc|text|emph|mathrm|mathbf|mathit|mathsf|mathtt|"
    r"mathcal|mathbb|boldsymbol|bm|operatorname|hat|tilde|bar|widetilde|widehat)\s*\{([^{}]*)\}"
)
_TEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_TEX_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_TEX_COMMAND = re.compile(r"\\([A-Za-z]+|[%$&#_{},;! ])")
_TEX_SCRIPT_BRACES = re.compile(r"([_^])\{([^{}]*)\}")


def plain_math(tex: str) -> str | None:
    """A formula's TeX as plain text a reader would type (``\\underline{Le}`` -> ``Le``, ``\\pm 3`` -> ``± 3``,
    ``\\frac{1}{2}`` -> ``1/2``, ``O(n^{2})`` -> ``O(n^2)``), or None when it has a command this does not
    know (then the ``$…$`` source is the honest plain text)."""
    out = tex
    for _ in range(3):  # nested wrappers: \\mathbf{\\underline{x}}
        out = _TEX_WRAPPERS.sub(r"\1", out)
    out = _TEX_FRAC.sub(r"\1/\2", out)
    out = _TEX_SQRT.sub(r"√\1", out)
    unknown = False

    def symbol(m: re.Match[str]) -> str:
        nonlocal unknown
        name = m.group(1)
        if name in _TEX_SYMBOLS:
            return _TEX_SYMBOLS[name] + (" " if name.isalpha() and len(_TEX_SYMBOLS[name]) > 1 else "")
        unknown = True
        return m.group(0)

    out = _TEX_COMMAND.sub(symbol, out)
    if unknown or "\\" in out:
        return None
    out = _TEX_SCRIPT_BRACES.sub(lambda m: f"{m.group(1)}{m.group(2)}" if len(m.group(2)) == 1 else m.group(0), out)
    out = out.replace("{", "").replace("}", "")
    return collapse(out)


def plain_text(text: str) -> str:
    """What a reader sees, as plain text (terminal, logs): display markup dropped (rule 2), each formula as
    :func:`plain_math` writes it, else its ``$…$`` / ``$$…$$`` source; whitespace collapsed.
    ``"377\\%"`` -> ``"377%"``, ``"$\\underline{Le}$arning"`` -> ``"Learning"``."""
    parts = []
    for s in split_math(text):
        if not s.math:
            parts.append(display_text(s.text))
            continue
        plain = plain_math(s.text)
        parts.append(plain if plain is not None else (f"$${s.text}$$" if s.display else f"${s.text}$"))
    return "".join(parts)


#: A chat template's control tokens as a planted attack writes them (``<|im_start|>``, ``<<SYS>>``, ``[INST]``,
#: ``### Instruction:``): read by ingest's steering flag (assistant/ingest/steering.py).
CHAT_TEMPLATE_TOKEN = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|<<SYS>>|<start_of_turn>|"
    r"(?:^|\n)\s*(?:###\s*(?:Instruction|System|Response)\s*:|\[INST\])",
    re.I,
)
#: A markdown image or raw HTML that could render or fetch something (``![x](...)``, ``<script``, ``<!--``).
IMAGE_OR_HTML = re.compile(r"!\[[^\]]*\]\(|<\s*(?:script|img|iframe|a|div|span|style)\b|<!--", re.I)
#: Zero-width and tag characters that hide text from a reader.
HIDDEN_CHARACTERS = re.compile("[\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\U000e0000-\U000e007f]")
