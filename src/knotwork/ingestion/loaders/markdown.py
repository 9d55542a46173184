"""Markdown and hard-wrapped plain text to the text shape the rest of the pipeline reads.

That shape is the one Confluence storage XHTML converts to (``loaders.xhtml``): ``#`` headings,
``- `` list items, a table row as ``Header: value; Header: value``, and one paragraph per line.
Markdown's soft line breaks are joined (CommonMark renders them as spaces), so a sentence that
was wrapped at 80 columns stays one sentence; emphasis, inline code marks, link and image
syntax and HTML comments are dropped, their text kept. Code blocks are kept verbatim.

Plain text has no such rule: a wrapped line is joined to the next only when it looks like
wrapped prose (long, not ending a sentence or a label, the next line not a list item), so
``Owner: Jo Park`` / ``Due: 2024-06-20`` lines stay apart.
"""

from __future__ import annotations

import re

from knotwork.ingestion.loaders.xhtml import is_key_value_header

__all__ = ["markdown_title", "markdown_to_text", "unwrap_plain_text"]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])[ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RULE = re.compile(r"^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE = re.compile(r"`+([^`\n]+?)`+")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash escape of ASCII punctuation
_FRONT_MATTER_END = ("---", "...")
_FRONT_MATTER_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_SENTENCE_END = (".", "!", "?", ":", ";")
_WRAP_MIN = 50  # plain text: a line this long that does not end a sentence is wrapped prose


def _inline(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(2):  # nested emphasis: ***x*** and **_x_**
        text = _STRONG.sub(r"\2", text)
        text = _EM_STAR.sub(r"\1", text)
        text = _EM_UNDERSCORE.sub(r"\1", text)
        text = _STRIKE.sub(r"\1", text)
    return _ESCAPE.sub(r"\1", text) if "\\" in text else text


def _cells(line: str) -> list[str]:
    return [_inline(c.strip()) for c in line.strip().strip("|").split("|")]


def _table(rows: list[str]) -> list[str]:
    """A pipe table (header, rule, rows) as ``Header: value; …`` lines, like Confluence's."""
    header = _cells(rows[0])
    out = []
    for row in rows[2:]:
        values = _cells(row)
        if is_key_value_header(header):  # "| Field | Value |": "Owner: Jo Park"
            if len(values) > 1 and values[0] and values[1]:
                out.append(f"{values[0]}: {values[1]}")
            continue
        pairs = [f"{h}: {v}" if h else v for h, v in zip(header, values, strict=False) if v]
        if pairs:
            out.append("; ".join(pairs))
    return out


def _skip_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() in _FRONT_MATTER_END:
                return lines[end + 1:]
    return lines


def markdown_title(text: str) -> str | None:
    """The first Markdown heading (ATX or setext, outside code fences), else front matter."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in _FRONT_MATTER_END), 0)
        if end:
            match = _FRONT_MATTER_TITLE.search("\n".join(lines[1:end]))
            if match:
                return match.group(1).strip("\"'") or None
            start = end + 1
    in_fence = False
    for index in range(start, len(lines)):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        match = _HEADING.match(line)
        if match:
            return match.group(2).strip()
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if (
            line.strip()
            and not _SETEXT.match(line)
            and _SETEXT.match(following)
        ):
            return line.strip()
    return None


def markdown_to_text(text: str) -> str:
    """Markdown → the pipeline's text shape (see the module docstring)."""
    lines = _skip_front_matter(_COMMENT.sub("", text).splitlines())
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.append(_inline(" ".join(p.strip() for p in paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):  # a code block, verbatim up to its closing fence
            flush()
            i += 1
            while i < len(lines) and not _FENCE.match(lines[i]):
                out.append(lines[i])
                i += 1
            i += 1
            continue
        if not line.strip():
            flush()
            out.append("")
            i += 1
            continue
        if "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            flush()
            rows = [line, lines[i + 1]]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(lines[i])
                i += 1
            out.extend(_table(rows))
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            out.append(f"{heading.group(1)} {_inline(heading.group(2))}")
            i += 1
            continue
        if paragraph and _SETEXT.match(line):  # the paragraph above was a heading
            level = "#" if line.strip().startswith("=") else "##"
            title = _inline(" ".join(p.strip() for p in paragraph))
            paragraph.clear()
            out.append(f"{level} {title}")
            i += 1
            continue
        if _RULE.match(line):
            flush()
            i += 1
            continue
        item = _LIST.match(line)
        if item:
            flush()
            indent = "  " * (len(item.group(1).expandtabs(4)) // 2)
            body = [item.group(2)]
            i += 1
            while (i < len(lines) and lines[i].strip() and not _LIST.match(lines[i])
                   and not _HEADING.match(lines[i]) and not _FENCE.match(lines[i])
                   and lines[i].startswith((" ", "\t"))):  # the item's wrapped lines
                body.append(lines[i].strip())
                i += 1
            out.append(f"{indent}- {_inline(' '.join(body))}")
            continue
        quote = _QUOTE.match(line)
        paragraph.append(quote.group(1) if quote else line)
        i += 1
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def unwrap_plain_text(text: str) -> str:
    """Join hard-wrapped prose lines of plain text; leave short, labelled and list lines."""
    lines = text.splitlines()
    out: list[str] = []
    for line in lines:
        previous = out[-1] if out else ""
        if (previous.strip() and line.strip() and len(previous) >= _WRAP_MIN
                and not previous.rstrip().endswith(_SENTENCE_END)
                and not _LIST.match(line) and not _HEADING.match(line)):
            out[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)
