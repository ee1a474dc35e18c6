"""Pure functions, no gradio import: Answer -> Markdown/HTML for the chat window.

All text from abstracts and from the model is HTML-escaped (so ``<script>``, Markdown images and
raw links inside an abstract render as inert text); only our own anchors to the papers' ``url``
(http/https from papers.jsonl) are emitted as links, opening in a new tab.
"""

from __future__ import annotations

import html

from assistant.types import Answer

_MD_SPECIAL = str.maketrans({"[": "&#91;", "]": "&#93;", "!": "&#33;", "*": "&#42;", "_": "&#95;", "`": "&#96;", "#": "&#35;", "|": "&#124;"})


def safe_text(text: str) -> str:
    """Escape HTML and Markdown control characters so text renders literally."""
    return html.escape(text, quote=True).translate(_MD_SPECIAL)


def paper_link(title: str, url: str) -> str:
    """An anchor opening ``url`` in a new tab, or the bare title when there is no http(s) link."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{safe_text(title)}</a>'
    return safe_text(title)


def answer_body(answer: Answer) -> str:
    """The answer sentences with ``[n]`` markers (no references)."""
    if answer.abstained:
        return safe_text(answer.notice)
    parts = []
    for s in answer.sentences:
        marks = "".join(f"<sup>[{n}]</sup>" for n in s.citations)
        parts.append(f"{safe_text(s.text)}{marks}")
    return " ".join(parts)


def answer_markdown(answer: Answer, *, final: bool = True) -> str:
    """Answer + notice + numbered references (title link, authors, supporting sentences) + model line."""
    out = [answer_body(answer)]
    if answer.notice and not answer.abstained:
        out.append(f"<em>{safe_text(answer.notice)}</em>")
    if answer.citations:
        refs = ["<b>References</b>", "<ol class='refs'>"]
        for c in answer.citations:
            authors = ", ".join(c.paper.authors[:6]) + (" et al." if len(c.paper.authors) > 6 else "")
            item = f"<li value='{c.n}'>{paper_link(c.paper.title, c.paper.url)}"
            if authors:
                item += f"<br><small>{safe_text(authors)}</small>"
            for ev in c.evidence:
                item += f"<blockquote>{safe_text(ev)}</blockquote>"
            refs.append(item + "</li>")
        refs.append("</ol>")
        out.append("\n".join(refs))
    elif answer.abstained and answer.sources:
        near = ", ".join(paper_link(h.paper.title, h.paper.url) for h in answer.sources[:3])
        out.append(f"Nearest papers: {near}")
    if final:
        secs = answer.timings_ms.get("total", 0.0) / 1000
        out.append(f"<small>answered by {safe_text(answer.model)} in {secs:.1f} s</small>")
    return "\n\n".join(out)


def error_markdown(message: str) -> str:
    """A user-facing error message."""
    return f"⚠️ {safe_text(message)}"
