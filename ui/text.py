"""The one path for corpus text (titles, authors, abstracts, evidence, answer sentences, table cells) on
its way to the screen or an export file. Pure functions, no gradio import.

Rules, applied in this order, to every piece of corpus or model text:

1. **Math is found first** (:func:`split_math`): ``$$…$$``, ``\\[…\\]``, ``\\(…\\)`` and ``$…$``. A single
   ``$`` opens math only when a non-space follows it, and closes it only when a non-space precedes it and no
   digit follows it (pandoc's rule), so dollar amounts ("$5 and $10") stay text; ``\\$`` is a literal dollar.
2. **Display markup outside math is dropped** (:func:`display_text`): ``**bold**``/``*italic*`` and
   ``\\emph{x}``-style text commands show their content; ``\\%``, ``\\$``, ``\\&``, ``\\#``, ``\\_`` show the
   character. Nothing else is changed: whitespace is collapsed, every other character is kept.
3. **Escaped once for the target**: HTML (:func:`html_text`) escapes ``& < > " '`` and neutralises every
   Markdown control character as a numeric entity (so the chat's Markdown renderer shows it literally);
   math becomes ``\\(…\\)``/``\\[…\\]`` for the chat's KaTeX (``LATEX_DELIMITERS``), or stays ``$…$`` source
   where there is no KaTeX; a formula that only styles text (``$\\underline{Le}$arning``,
   :func:`~assistant.lang.markup.text_style`) is that text, styled (``<u>``, ``<b>``, ``<i>``, ``<code>``).
   Markdown exports (:func:`markdown_text`) backslash-escape the Markdown characters of the text and keep math as
   ``$…$``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from assistant.lang.markup import MATH, Segment, collapse, display_text, plain_text, split_math, text_style

__all__ = [
    "LATEX_DELIMITERS",
    "Segment",
    "collapse",
    "display_text",
    "escape_html",
    "highlight_html",
    "html_text",
    "markdown_text",
    "plain_text",
    "split_math",
    "text_style",
]

#: What the chat's KaTeX renders (gradio ``latex_delimiters``): only the delimiters :func:`html_text`
#: emits, never ``$``, so a dollar sign in the text can never start math on the page.
LATEX_DELIMITERS = [{"left": "\\(", "right": "\\)", "display": False}, {"left": "\\[", "right": "\\]", "display": True}]

_HTML = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&#39;",
        # Markdown control characters, and the backslash (Markdown escapes; KaTeX delimiters)
        "[": "&#91;",
        "]": "&#93;",
        "!": "&#33;",
        "*": "&#42;",
        "_": "&#95;",
        "`": "&#96;",
        "#": "&#35;",
        "|": "&#124;",
        "~": "&#126;",
        "\\": "&#92;",
        "$": "&#36;",
    }
)
_MD_ESCAPE = re.compile(r"([\\`*_\[\]<>|~$])")
_MD_LINE_START = re.compile(r"^(?:(?P<mark>[#>]|[-+](?=\s))|(?P<num>\d+)(?P<dot>[.)])(?=\s))")


def escape_html(text: str) -> str:
    """Plain text (already display-normalised) as inert HTML: every HTML and Markdown control character
    as an entity, each exactly once."""
    return text.translate(_HTML)


#: The HTML element a text-styling formula is shown in (:func:`assistant.lang.markup.text_style`).
_STYLE_TAG = {"underline": "u", "bold": "b", "italic": "i", "mono": "code"}


def _math_html(seg: Segment, katex: bool) -> str:
    styled = text_style(seg.text)
    if styled is not None:  # text in a formula's clothes: styled text, not math italics mid-word
        style, text = styled
        tag = _STYLE_TAG.get(style)
        return f"<{tag}>{escape_html(text)}</{tag}>" if tag else escape_html(text)
    if not katex:
        return escape_html(f"$${seg.text}$$" if seg.display else f"${seg.text}$")
    left, right = ("\\[", "\\]") if seg.display else ("\\(", "\\)")
    return left + html.escape(seg.text, quote=False) + right


def html_text(text: str, *, katex: bool = True) -> str:
    """Corpus/model text as HTML for the page (module rules 1-3).

    Args:
        katex: math as ``\\(…\\)`` for the chat's KaTeX; False (panels without KaTeX): as ``$…$`` source.
    """
    return "".join(_math_html(s, katex) if s.math else escape_html(display_text(s.text)) for s in split_math(text))


def markdown_text(text: str) -> str:
    """Corpus text as one line of Markdown (exports): Markdown characters backslash-escaped, math kept
    as ``$…$`` / ``$$…$$``."""
    parts = []
    for s in split_math(text):
        if s.math:
            parts.append(f"$${s.text}$$" if s.display else f"${s.text}$")
        else:
            parts.append(_MD_ESCAPE.sub(r"\\\1", display_text(s.text)))
    return _MD_LINE_START.sub(lambda m: f"\\{m['mark']}" if m["mark"] else f"{m['num']}\\{m['dot']}", "".join(parts))


def highlight_html(text: str, phrases: Iterable[str], *, katex: bool = True) -> str:
    """:func:`html_text` of ``text`` with every occurrence of each phrase in ``<mark>`` (overlaps merged).
    A formula is marked whole or not at all, so its delimiters never straddle a tag."""
    text = collapse(text)
    marked = [False] * len(text)
    for phrase in phrases:
        phrase = collapse(phrase)
        if not phrase:
            continue
        start = text.find(phrase)
        while start >= 0:
            marked[start : start + len(phrase)] = [True] * len(phrase)
            start = text.find(phrase, start + len(phrase))
    out: list[str] = []
    pos = 0
    for m in [*MATH.finditer(text), None]:
        end = m.start() if m else len(text)
        # text before this formula: runs of marked / unmarked characters
        i = pos
        while i < end:
            j = i
            while j < end and marked[j] == marked[i]:
                j += 1
            piece = escape_html(display_text(text[i:j]))
            out.append(f"<mark>{piece}</mark>" if marked[i] else piece)
            i = j
        if m is None:
            break
        seg = split_math(m.group(0))[0]
        piece = _math_html(seg, katex)
        out.append(f"<mark>{piece}</mark>" if any(marked[m.start() : m.end()]) else piece)
        pos = m.end()
    return "".join(out).replace("</mark><mark>", "")
