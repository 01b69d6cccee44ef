"""Keep code in sphinx-gallery's thumbnail titles.

sphinx-gallery turns an example's reST title into the plain text of its thumbnail
(``_sanitize_rst``): it drops the backquotes of an inline literal and then reads every pair
of ``*`` left in the string as emphasis, so the title
``What does ``loss = mean((x*w1 + w2) * (x*w1*w3))`` look like?`` showed on the gallery index
as ``loss = mean((xw1 + w2)  (xw1w3))``. This extension wraps the sanitizer: the text of each
inline literal is set aside before it runs and put back, verbatim, afterwards.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from sphinx.application import Sphinx

#: An inline literal as the sanitizer recognises it: ``text``, after whitespace or at the start.
LITERAL = re.compile(r"(?<!\S)``([^`]+)``(?=\W|$)")
#: Placeholder of the n-th literal: characters no sanitizer rule touches.
HOLD = "\x00{}\x00"
HELD = re.compile("\x00(\\d+)\x00")


def keep_literals(sanitize: Callable[[str], str]) -> Callable[[str], str]:
    """``sanitize``, except that inline literals come out as their text, unchanged."""

    def sanitize_keeping_literals(string: str) -> str:
        held: list[str] = []

        def hold(match: re.Match[str]) -> str:
            held.append(match.group(1))
            return HOLD.format(len(held) - 1)

        cleaned = sanitize(LITERAL.sub(hold, string))
        return HELD.sub(lambda match: held[int(match.group(1))], cleaned)

    sanitize_keeping_literals.__wrapped__ = sanitize  # type: ignore[attr-defined]
    return sanitize_keeping_literals


def setup(app: Sphinx) -> dict[str, Any]:
    gen_rst = importlib.import_module("sphinx_gallery.gen_rst")  # untyped: no stubs
    sanitize = gen_rst._sanitize_rst
    if not hasattr(sanitize, "__wrapped__"):
        gen_rst._sanitize_rst = keep_literals(sanitize)  # type: ignore[attr-defined]
    return {"parallel_read_safe": True, "parallel_write_safe": True}
