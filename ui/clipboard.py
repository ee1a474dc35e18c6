"""What the chat's Copy buttons copy and what a screen reader reads for each message (issue 43): clean text with
the ``[n]`` markers and the references, never the HTML the chat renders.

Gradio copies a message's raw content and uses it as the message's ``aria-label``. Each message's content
therefore carries its clean text (:func:`with_copy_text`: base64 in an HTML comment, invisible on the page), and
:data:`CLEAN_COPY_JS`, run in the browser when the page loads, puts that text on the clipboard instead of the
HTML (the per-message and the whole-conversation buttons, with or without the browser's clipboard API) and into
the ``aria-label``. A message without it (a progress line, an error) is copied as the text of its HTML.
"""

from __future__ import annotations

import base64
import binascii

from assistant.answer.render import text_sentences
from assistant.types import Answer, AnswerSentence
from ui.render import answer_markdown, question_html

_COPY_OPEN = "<!--copy:"
_COPY_CLOSE = "<!--/copy-->"


def with_copy_text(html: str, text: str) -> str:
    """``html`` (a chat message's content) carrying ``text`` as what Copy copies and what the ``aria-label`` says."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"{_COPY_OPEN}{encoded}-->{html}{_COPY_CLOSE}"


def copy_text_of(content: str) -> str | None:
    """The text :func:`with_copy_text` put into ``content``, or None (the same decoding the browser does)."""
    if not content.startswith(_COPY_OPEN):
        return None
    encoded, sep, _ = content[len(_COPY_OPEN) :].partition("-->")
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-8") if sep else None
    except (binascii.Error, UnicodeDecodeError):
        return None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _marked(s: AnswerSentence) -> str:
    return (_one_line(s.text) + " " + "".join(f"[{n}]" for n in s.citations)).strip()


def answer_copy_text(answer: Answer) -> str:
    """An answer as clean text: the notice, the comparison (one line per paper and column), the sentences with
    their ``[n]`` (a topic list one paper per line), then "References" with ``[n] title — authors. link`` for
    each cited paper. Math stays in its ``$…$`` source."""
    parts: list[str] = []
    titles = {c.n: c.paper.title for c in answer.citations}
    if answer.notice:
        parts.append(_one_line(answer.notice))
    if answer.comparison is not None and answer.comparison.rows:
        columns = answer.comparison.columns
        lines = []
        for row in answer.comparison.rows:
            cells = [
                f"{col}: {_marked(c)}" if c is not None else f"{col}: not reported"
                for col, c in zip(columns, row.cells, strict=False)
            ]
            lines.append(f"[{row.n}] {_one_line(titles.get(row.n, ''))}\n" + "\n".join(f"  {c}" for c in cells))
        parts.append("\n".join(lines))
    if not answer.abstained and answer.sentences:
        if answer.intent == "topic" and answer.comparison is None:
            parts.append("\n".join(f"- {_marked(s)}" for s in answer.sentences))
        elif shown := text_sentences(answer):  # a comparison's parts are its table's cells, not repeated
            parts.append(" ".join(_marked(s) for s in shown))
    if answer.citations:
        refs = ["References"]
        for c in answer.citations:
            line = f"[{c.n}] {_one_line(c.paper.title)}"
            if c.paper.authors:
                line += " — " + ", ".join(c.paper.authors)
            refs.append(line + (f". {c.paper.url}" if c.paper.url else ""))
        parts.append("\n".join(refs))
    return "\n\n".join(p for p in parts if p)


def question_content(question: str) -> str:
    """The chat message of a question: its HTML (:func:`~ui.render.question_html`), copied as typed (a question the
    HTML shows as it is typed is left as it is: API clients read it back as the question)."""
    shown = question_html(question)
    return shown if shown == question.strip() else with_copy_text(shown, question.strip())


def answer_content(answer: Answer, anchor: str) -> str:
    """The chat message of a final answer: its HTML (:func:`~ui.render.answer_markdown`), copied as
    :func:`answer_copy_text`."""
    return with_copy_text(answer_markdown(answer, anchor=anchor), answer_copy_text(answer))


#: Runs once in the browser when the page loads (see the module docstring).
CLEAN_COPY_JS = r"""
() => {
  if (window.__cleanCopy) return;
  window.__cleanCopy = true;
  const MARKED = /<!--copy:([A-Za-z0-9+/=]*)-->[\s\S]*?<!--\/copy-->/g;
  const TAG = /<\/?[a-z][a-z0-9]*(\s[^<>]*)?\/?>/i;
  const decode = (b) => new TextDecoder().decode(Uint8Array.from(atob(b), (c) => c.charCodeAt(0)));
  const htmlText = (html) => {
    const spaced = html.replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/(p|li|tr|h\d|div|ol|ul|table|details|summary|blockquote)>/gi, '$&\n');
    const doc = new DOMParser().parseFromString(spaced, 'text/html');
    return (doc.body.textContent || '').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n');
  };
  const plain = (seg) => (TAG.test(seg) ? htmlText(seg) : seg);
  const clean = (text) => {
    if (typeof text !== 'string' || !text.includes('<')) return text;
    let out = '';
    let last = 0;
    for (const m of text.matchAll(MARKED)) {
      out += plain(text.slice(last, m.index)) + decode(m[1]);
      last = m.index + m[0].length;
    }
    return (out + plain(text.slice(last))).trim();
  };
  window.__cleanCopyText = clean;
  if (navigator.clipboard && navigator.clipboard.writeText) {
    const write = navigator.clipboard.writeText.bind(navigator.clipboard);
    navigator.clipboard.writeText = (text) => write(clean(text));
  }
  // Without the clipboard API (plain http on another host) Gradio copies from an off-screen textarea.
  document.addEventListener('copy', (e) => {
    const t = e.target;
    if (t && t.tagName === 'TEXTAREA' && t.style.left === '-999999px' && t.value.includes('<')) {
      e.clipboardData.setData('text/plain', clean(t.value));
      e.preventDefault();
    }
  }, true);
  const fixed = new WeakMap();
  const fixLabel = (el) => {
    const v = el.getAttribute && el.getAttribute('aria-label');
    if (!v || fixed.get(el) === v) return;
    const m = v.match(/^(user|bot)'s message: ([\s\S]*)$/);
    if (!m || !m[2].includes('<')) return;
    const label = m[1] + "'s message: " + clean(m[2]);
    fixed.set(el, label);
    el.setAttribute('aria-label', label);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') fixLabel(r.target);
      for (const n of r.addedNodes || []) {
        if (n.nodeType !== 1) continue;
        fixLabel(n);
        n.querySelectorAll('[aria-label]').forEach(fixLabel);
      }
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeFilter: ['aria-label']});
  document.querySelectorAll('[aria-label]').forEach(fixLabel);
}
"""
