"""HTML and Confluence storage-format XHTML to plain text that keeps its structure.

Headings become ``# Heading`` lines (one ``#`` per level), paragraphs are separated by
blank lines, list items become ``- item`` lines (nested items indented two spaces),
and table rows become ``Header: cell; Header: cell`` lines when the table has a header
row.  Confluence specifics: ``<ac:structured-macro>`` bodies of content macros (code,
info, note, panel, ...) are kept, other macros are dropped; ``<ac:link>`` to a user
renders the user's display name (from ``users`` when given, else the account id), to a
page its title; emoticons and images are dropped.  Entities are decoded.

Only the standard library's :mod:`html.parser` is used; the parser is lenient, so
ordinary (non-X) HTML files go through the same code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html import escape, unescape
from html.parser import HTMLParser

__all__ = ["HtmlText", "convert_html", "html_to_text"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VOID = _words("area base br col embed hr img input link meta param source track wbr")
# Elements whose whole subtree is invisible text.
_SKIP = _words(
    "script style head noscript template svg img iframe object button select ac:parameter "
    "ac:emoticon ac:image ac:placeholder ac:task-id ac:task-uuid"
)
_BLOCK = _words(
    "p div section article main header footer nav aside blockquote figure figcaption "
    "address details summary dl dt dd form fieldset li tr td th caption body html center "
    "ac:layout ac:layout-section ac:layout-cell ac:rich-text-body ac:task-body "
    "ac:adf-content"
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_LISTS = frozenset({"ul", "ol", "ac:task-list"})
# Macros whose body is page content; every other macro (toc, jira, children, ...) is dropped.
_KEPT_MACROS = _words(
    "code noformat info note tip warning panel expand excerpt section column details "
    "quote excerpt-include-body"
)
_CODE_MACROS = frozenset({"code", "noformat"})
_USER_ATTRS = ("ri:account-id", "ri:userkey", "ri:username")

_BR = "\x00"  # line-break marker inside inline text (never whitespace for ``\s``)
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.DOTALL)
_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")
_INVISIBLE = re.compile(r"<(script|style|head)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)


@dataclass
class _Element:
    tag: str
    attrs: dict[str, str]
    children: list[_Element | str] = field(default_factory=list)


class _TreeBuilder(HTMLParser):
    """Builds a small, forgiving element tree (closes implied ``p``/``li``/``td``...)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Element("#root", {})
        self._stack: list[_Element] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._close_implied(tag)
        element = _Element(tag, {name: value or "" for name, value in attrs})
        self._stack[-1].children.append(element)
        if tag not in _VOID:
            self._stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._close_implied(tag)
        self._stack[-1].children.append(_Element(tag, {n: v or "" for n, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._stack) - 1, 0, -1):
            if self._stack[index].tag == tag:
                del self._stack[index:]
                return

    def handle_data(self, data: str) -> None:
        self._stack[-1].children.append(data)

    def _close_implied(self, tag: str) -> None:
        if tag == "li":
            self._pop_to("li", {"ul", "ol"})
        elif tag == "tr":
            self._pop_to("tr", {"table", "thead", "tbody", "tfoot"})
        elif tag in ("td", "th"):
            self._pop_to(("td", "th"), {"tr", "table"})
        elif tag in ("dt", "dd"):
            self._pop_to(("dt", "dd"), {"dl"})
        if (
            tag == "p"
            or tag in _BLOCK
            or tag in _LISTS
            or tag in _HEADINGS
            or tag in ("table", "pre")
        ) and self._stack[-1].tag == "p":
            self._stack.pop()

    def _pop_to(self, tags: str | tuple[str, ...], boundary: set[str]) -> None:
        wanted = (tags,) if isinstance(tags, str) else tags
        for index in range(len(self._stack) - 1, 0, -1):
            current = self._stack[index].tag
            if current in boundary:
                return
            if current in wanted:
                del self._stack[index:]
                return


def _parse(markup: str) -> _Element:
    # CDATA sections (code macro bodies) become ordinary escaped text first, so the
    # parser's version-dependent handling of ``<![CDATA[`` never matters.
    markup = _CDATA.sub(lambda match: escape(match.group(1), quote=False), markup)
    builder = _TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root


def _text_content(element: _Element) -> str:
    parts: list[str] = []
    for child in element.children:
        if isinstance(child, str):
            parts.append(child)
        elif child.tag not in ("script", "style"):
            parts.append(_text_content(child))
    return "".join(parts)


def _has_text(element: _Element) -> bool:
    return bool(_text_content(element).strip())


def _child(element: _Element, *tags: str) -> _Element | None:
    for child in element.children:
        if isinstance(child, _Element) and child.tag in tags:
            return child
    return None


def _find(element: _Element, tag: str) -> _Element | None:
    for child in element.children:
        if isinstance(child, _Element):
            if child.tag == tag:
                return child
            found = _find(child, tag)
            if found is not None:
                return found
    return None


def _normalize_inline(text: str) -> str:
    text = text.replace("\u200b", "").replace("\ufeff", "")
    text = _SPACES.sub(" ", text)
    lines = (line.strip() for line in text.split(_BR))
    return "\n".join(line for line in lines if line)


def _preformatted(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


_KEY_WORDS = frozenset({"field", "fields", "property", "properties", "key", "attribute",
                        "attributes", "parameter", "setting", "label"})
_VALUE_WORDS = frozenset({"value", "values", "details", "detail", "info", "information", "entry"})


def is_key_value_header(headers: list[str]) -> bool:
    """A two-column header that only says "key | value" ("Field | Value", "Property |
    Details"): its rows are labelled values, not records of a "Field" and a "Value"."""
    words = [" ".join(h.lower().split()) for h in headers]
    return len(words) == 2 and words[0] in _KEY_WORDS and words[1] in _VALUE_WORDS


def _table_rows(element: _Element, in_head: bool = False) -> Iterator[tuple[_Element, bool]]:
    for child in element.children:
        if not isinstance(child, _Element) or child.tag == "table":
            continue
        if child.tag == "tr":
            yield child, in_head
        else:
            yield from _table_rows(child, in_head or child.tag == "thead")


class _Renderer:
    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.blocks: list[str] = []
        self._buf: list[str] = []

    # -- driving ---------------------------------------------------------------

    def render_children(self, element: _Element) -> None:
        for child in element.children:
            self.walk(child)

    def finish(self) -> list[str]:
        self._flush()
        return self.blocks

    def _flush(self) -> None:
        text = _normalize_inline("".join(self._buf))
        self._buf.clear()
        if text:
            self.blocks.append(text)

    def _sub_blocks(self, element: _Element) -> list[str]:
        sub = _Renderer(self._users)
        sub.render_children(element)
        return sub.finish()

    def _flat(self, element: _Element) -> str:
        lines = (ln.strip() for block in self._sub_blocks(element) for ln in block.splitlines())
        return " ".join(line for line in lines if line)

    # -- dispatch ----------------------------------------------------------------

    def walk(self, node: _Element | str) -> None:
        if isinstance(node, str):
            self._buf.append(node)
            return
        tag = node.tag
        if tag in _SKIP:
            return
        if tag == "br":
            self._buf.append(_BR)
        elif tag in _HEADINGS:
            self._flush()
            text = self._flat(node)
            if text:
                self.blocks.append("#" * _HEADINGS[tag] + " " + text)
        elif tag in _LISTS:
            self._flush()
            self._append_block(self._list(node))
        elif tag == "table":
            self._flush()
            self._append_block(self._table(node))
        elif tag == "pre":
            self._flush()
            self._append_block(_preformatted(_text_content(node)))
        elif tag == "hr":
            self._flush()
        elif tag in ("ac:structured-macro", "ac:macro"):
            self._macro(node)
        elif tag == "ac:link":
            self._ac_link(node)
        elif tag.startswith("ri:"):
            self._buf.append(self._resource(node))
        elif tag == "ac:adf-extension":
            fallback = _child(node, "ac:adf-fallback")
            self.render_children(fallback if fallback is not None else node)
        elif tag == "a":
            if _has_text(node):
                self.render_children(node)
            else:
                href = node.attrs.get("href", "")
                if href and not href.startswith(("#", "javascript:")):
                    self._buf.append(href)
        elif tag == "time" and not _has_text(node):
            self._buf.append(node.attrs.get("datetime", ""))
        elif tag in _BLOCK:
            self._flush()
            self.render_children(node)
            self._flush()
        else:  # inline or unknown element: transparent
            self.render_children(node)

    def _append_block(self, block: str) -> None:
        if block.strip():
            self.blocks.append(block)

    # -- structures ----------------------------------------------------------------

    def _list(self, element: _Element) -> str:
        lines: list[str] = []
        for child in element.children:
            if isinstance(child, str):
                text = _normalize_inline(child)
                if text:
                    lines.append("- " + text)
            elif child.tag in ("li", "ac:task"):
                lines.extend(self._list_item(child))
            elif child.tag in _LISTS:
                lines.extend("  " + line for line in self._list(child).splitlines())
            elif child.tag not in _SKIP:
                text = self._flat(child)
                if text:
                    lines.append("- " + text)
        return "\n".join(lines)

    def _list_item(self, item: _Element) -> list[str]:
        marker = "- "
        body: _Element | None = item
        if item.tag == "ac:task":
            status = _child(item, "ac:task-status")
            done = status is not None and _text_content(status).strip() == "complete"
            marker = "- [x] " if done else "- [ ] "
            body = _child(item, "ac:task-body")
        if body is None:
            return []
        lines = [ln for block in self._sub_blocks(body) for ln in block.splitlines() if ln.strip()]
        if not lines:
            return []
        return [marker + lines[0]] + ["  " + line for line in lines[1:]]

    def _table(self, table: _Element) -> str:
        # (cells, a header row, a row whose first cell is a <th> and the rest <td>)
        rows: list[tuple[list[str], bool, bool]] = []
        for row, in_head in _table_rows(table):
            cells: list[str] = []
            tags: list[str] = []
            for cell in row.children:
                if isinstance(cell, _Element) and cell.tag in ("td", "th"):
                    cells.append(self._flat(cell))
                    tags.append(cell.tag)
            all_th = all(tag == "th" for tag in tags)
            row_head = len(tags) > 1 and tags[0] == "th" and "th" not in tags[1:]
            if any(cells):
                rows.append((cells, in_head or all_th, row_head and not in_head))
        if not rows:
            return ""
        headers: list[str] | None = None
        if rows[0][1] and len(rows) > 1:
            headers = rows[0][0]
            rows = rows[1:]
            if is_key_value_header(headers):
                headers = None  # "Field | Value": each row is a "Field: value" line
                rows = [(cells, False, True) for cells, _, _ in rows]
        lines: list[str] = []
        for cells, is_header, row_head in rows:
            if headers is None and row_head and len(cells) > 1 and cells[0]:
                # a row headed by its own <th> ("Status | Accepted"): the label of its value
                line = f"{cells[0]}: {', '.join(cell for cell in cells[1:] if cell)}"
            elif headers is None or is_header:
                line = "; ".join(cell for cell in cells if cell)
            else:
                parts: list[str] = []
                for index, cell in enumerate(cells):
                    if not cell:
                        continue
                    header = headers[index] if index < len(headers) else ""
                    parts.append(f"{header}: {cell}" if header else cell)
                line = "; ".join(parts)
            if line:
                lines.append(line)
        return "\n".join(lines)

    # -- Confluence ----------------------------------------------------------------

    def _macro(self, macro: _Element) -> None:
        name = macro.attrs.get("ac:name", "").lower()
        params: dict[str, str] = {}
        for child in macro.children:
            if isinstance(child, _Element) and child.tag == "ac:parameter":
                params[child.attrs.get("ac:name", "")] = _normalize_inline(_text_content(child))
        if name == "status":  # inline lozenge: its label is meaningful ("DECIDED")
            self._buf.append(params.get("title", ""))
            return
        if name not in _KEPT_MACROS:
            return
        self._flush()
        if params.get("title"):
            self.blocks.append(params["title"])
        for child in macro.children:
            if not isinstance(child, _Element):
                continue
            if child.tag == "ac:plain-text-body":
                text = _text_content(child)
                self._append_block(
                    _preformatted(text) if name in _CODE_MACROS else _normalize_inline(text)
                )
            elif child.tag == "ac:rich-text-body":
                self.blocks.extend(self._sub_blocks(child))

    def _ac_link(self, link: _Element) -> None:
        body = _child(link, "ac:link-body", "ac:plain-text-link-body")
        if body is not None and _has_text(body):
            self.render_children(body)
            return
        for child in link.children:
            if isinstance(child, _Element) and child.tag.startswith("ri:"):
                self._buf.append(self._resource(child))
                return
        self._buf.append(link.attrs.get("ac:anchor", ""))

    def _resource(self, resource: _Element) -> str:
        attrs = resource.attrs
        if resource.tag == "ri:user":
            for attr in _USER_ATTRS:
                user_id = attrs.get(attr)
                if user_id:
                    return self._users.get(user_id, user_id)
            return ""
        for attr in ("ri:content-title", "ri:filename", "ri:value", "ri:space-key"):
            if attrs.get(attr):
                return attrs[attr]
        return ""


@dataclass(frozen=True)
class HtmlText:
    """Converted text plus the document's title (``<title>``, else the first ``<h1>``)."""

    text: str
    title: str | None


def convert_html(markup: str, users: Mapping[str, str] | None = None) -> HtmlText:
    root = _parse(markup)
    renderer = _Renderer(users or {})
    try:
        renderer.render_children(root)
        text = "\n\n".join(renderer.finish())
    except RecursionError:  # pathologically deep nesting: fall back to flat visible text
        flat = unescape(_TAGS.sub(" ", _INVISIBLE.sub(" ", _CDATA.sub(r"\1", markup))))
        text = _normalize_inline(flat)
        return HtmlText(text=text, title=None)
    title: str | None = None
    for tag in ("title", "h1"):
        element = _find(root, tag)
        if element is not None:
            candidate = _normalize_inline(_text_content(element)).replace("\n", " ")
            if candidate:
                title = candidate
                break
    return HtmlText(text=text, title=title)


def html_to_text(markup: str, users: Mapping[str, str] | None = None) -> str:
    """Visible text of ``markup`` with block structure; see the module docstring."""
    return convert_html(markup, users).text
