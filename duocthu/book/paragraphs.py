"""Paragraphs and hard lines from the page: where a printed line starts something, and how lines join.

Measured against the line's own column (its left and right edges) and the book's line pitch:

* a blank of more than a fifth of a line above it, or a first-line indent of about an em, starts a
  **paragraph**; a smaller indent (the demo book's list lines) starts a **line** of the same one;
* a line whose first word would have fitted at the end of the line above starts a **line** too:
  the typesetter broke there on purpose (the unindented lists of indications and doses), and so
  does a line after one that stops short of the edge in justified text (a paragraph's last line);
* in ragged-right text, inside a paragraph already read as a list (a hard line found above), a line
  starting with a capital or a digit after a line ending a sentence starts a **line** when it opens
  with a run-in label ("Người cao tuổi: …") or the item above was one sentence: there the page
  shows no break (the next word would not have fitted either way) but the list's own shape does;
* anything else **continues** the line above, so a wide justified word gap or a column break never
  cuts a sentence; a word hyphenated at the line end is joined again (see :class:`Vocabulary`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from duocthu.book.pagetypes import Line

PARAGRAPH, LINE, CONTINUE = "paragraph", "line", "continue"
_WORD_RE = re.compile(r"[^\W_][\w\-]*", re.UNICODE)
_SENTENCE_END = (".", "!", "?")
_RUN_IN_LABEL_RE = re.compile(r"[^.;:!?]{1,40}?: \S")  # a short lead-in and a colon: "Trẻ em 6–12 tuổi: 250 mg"
_SENTENCE_BREAK_RE = re.compile(r"[.!?]\s+(\w)")


def line_start(previous: Line | None, line: Line, body_size: float, pitch: float, justified: bool = False,
               right_edge: float = 0.0, paragraph: Sequence[str] = ()) -> str:
    """How ``line`` starts after ``previous`` (``None``: the first line of a section or after a table).

    ``justified``: ``previous`` is in justified text, where only the last line of a paragraph (or a
    line before a hard break) stops short of the right edge. ``right_edge``: where the text frame of
    ``previous`` ends, if known beyond its column's longest line on the page. ``paragraph``: the
    hard lines read so far of the paragraph ``previous`` is in (its last one ends with ``previous``).
    """
    if previous is None:
        return PARAGRAPH
    if previous.hyphen_end and line.text[:1].isalpha():
        return CONTINUE
    indent = line.x0 - line.column[0]
    hanging = abs(indent - (previous.x0 - previous.column[0])) < 1.0 and _full(previous, body_size)
    same_column = previous.page == line.page and previous.column == line.column
    if same_column and line.baseline - previous.baseline - pitch > max(1.5, 0.2 * pitch):
        return PARAGRAPH
    if indent >= 0.9 * body_size and not hanging:
        return PARAGRAPH
    if indent >= 0.3 * body_size and not hanging:
        return LINE
    if previous.x1 + 0.3 * body_size + line.first_word < max(previous.column[2], right_edge) - 1.0:
        return LINE  # the first word would have fitted above: a break the typesetter was told to make
    if justified and not _full(previous, body_size):
        return LINE  # a justified line that stops short ends its paragraph
    if not justified and _next_list_item(previous, line, paragraph):
        return LINE
    return CONTINUE


def _next_list_item(previous: Line, line: Line, paragraph: Sequence[str]) -> bool:
    """In a list (a paragraph with hard lines), whether ``line`` opens the next item after ``previous``.

    Only when ``previous`` ends a sentence and ``line`` starts with a capital or a digit; then a run-in
    label opening ``line``, or an item above of a single sentence, says a new item starts. An item of
    several sentences may go on with another one (a dose, then a caution about it), so it is left joined.
    """
    if len(paragraph) < 2 or not previous.text.rstrip().endswith(_SENTENCE_END):
        return False
    if not (line.text[:1].isupper() or line.text[:1].isdigit()):
        return False
    if _RUN_IN_LABEL_RE.match(line.text):
        return True
    item = paragraph[-1].rstrip()
    return not any(m.group(1)[0].isupper() or m.group(1)[0].isdigit() for m in _SENTENCE_BREAK_RE.finditer(item))


def _full(line: Line, body_size: float) -> bool:
    return line.x1 >= line.column[2] - 0.6 * body_size


_BREAK_AFTER = ("–", "—", "/")  # a line may end right after these inside a word ("2–" / "3 ngày")


def join_lines(text: str, following: str, hyphen: str, vocabulary: Vocabulary) -> str:
    """``text`` continued by the next printed line ``following``; ``hyphen`` is how ``text`` ends."""
    if hyphen:
        return vocabulary.join(text, following, hyphen)
    if text.endswith(_BREAK_AFTER) and len(text) > 1 and not text[-2].isspace() and following[:1].isalnum():
        return text + following
    return f"{text} {following}"


class Vocabulary:
    """Words of the book, to decide whether a hyphen at a line end belongs to the word.

    "para-" + "aminophenol" keeps its hyphen when the book prints "para-aminophenol" elsewhere;
    "cyclo-" + "oxygenase" loses it when the book prints "cyclooxygenase". Unseen either way, a
    hyphen stays before a capital or a digit ("Stevens-Johnson", "COX-2"), after a digit, a short
    prefix ("N-acetyl") or between two words the book uses alone ("acid-base"), and goes otherwise:
    typesetters break long Latin words at syllables. A hyphen Chromium drew for a soft hyphen
    (U+2010) always goes.
    """

    def __init__(self, lines: Iterable[Line]):
        self.counts: Counter[str] = Counter()
        previous_hyphen = False
        for line in lines:
            words = _WORD_RE.findall(line.text.lower())
            if previous_hyphen and words:
                words = words[1:]
            if line.hyphen_end and words:
                words = words[:-1]
            self.counts.update(w.strip("-") for w in words)
            previous_hyphen = bool(line.hyphen_end)

    def join(self, text: str, following: str, kind: str) -> str:
        """``text`` (ending in a hyphen) continued by ``following`` on the next line."""
        head = text[:-1]
        left = head.rsplit(" ", 1)[-1]
        right = following.split(" ", 1)[0]
        if kind == "soft" or not self._keeps(left, right):
            return head + following
        return text + following

    def _keeps(self, left: str, right: str) -> bool:
        right_word = _WORD_RE.match(right)
        right = right_word.group(0) if right_word else right
        left_word = re.search(r"[\w\-]+$", left)
        left = left_word.group(0) if left_word else left
        hyphenated, joined = self.counts[f"{left}-{right}".lower()], self.counts[f"{left}{right}".lower()]
        if hyphenated != joined:
            return hyphenated > joined
        if right[:1].isupper() or right[:1].isdigit() or any(c.isdigit() for c in left) or len(left) <= 2:
            return True
        if any(c.isupper() for c in left[1:]):
            return True
        return self.counts[left.lower()] > 0 and self.counts[right.lower()] > 0
