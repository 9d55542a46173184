"""The review queue page: counts, filters, pages, bulk decisions and keyboard use.

Shortcuts (admin.js): j / k next / previous item, a approve, r reject, ? help.
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

from knotwork.domain.models import EntityType
from knotwork.resolution.models import ReviewFilter, ReviewPage, ReviewSort, ReviewStatus
from knotwork.resolution.workflow import ReviewView
from knotwork.services.admin.render import Signed, page, review_card

STATUSES = ("pending", "approved", "rejected", "merged", "all")
SCORE_BANDS = {"": (None, None), "high": (0.9, 1.0), "mid": (0.7, 0.9), "low": (0.0, 0.7)}
HELP = ("Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>a</kbd> approve · "
        "<kbd>r</kbd> reject (split off) · <kbd>?</kbd> this help")


def _params(flt: ReviewFilter, group: str, offset: int, limit: int) -> dict[str, str]:
    band = next((name for name, (lo, hi) in SCORE_BANDS.items()
                 if name and (lo, hi) == (flt.min_score, flt.max_score)), "")
    values = {"group_id": group, "status": flt.status.value if flt.status else "all",
              "q": flt.query, "type": flt.entity_type or "", "decision": flt.decision or "",
              "band": band, "sort": flt.sort.value, "offset": str(offset), "limit": str(limit)}
    return {k: v for k, v in values.items() if v}


def _select(name: str, options: list[tuple[str, str]], chosen: str) -> str:
    return (f"<select name='{name}'>" + "".join(
        f"<option value='{escape(v)}'{' selected' if v == chosen else ''}>{escape(label)}</option>"
        for v, label in options) + "</select>")


def _filters(flt: ReviewFilter, group: str, limit: int, band: str) -> str:
    status = flt.status.value if flt.status else "all"
    types = [("", "any type")] + [(t.value, t.value.lower()) for t in EntityType]
    decisions = [("", "any decision")] + [(d, d) for d in ("merge_flagged", "new", "merge")]
    bands = [("", "any score"), ("high", "≥ 0.9"), ("mid", "0.7-0.9"), ("low", "< 0.7")]
    sorts = [(s.value, f"sort: {s.value}") for s in ReviewSort]
    return (f"<form method='get' action='/admin' id='filters'>"
            f"<input type='hidden' name='group_id' value='{escape(group)}'>"
            f"<input type='hidden' name='limit' value='{limit}'>"
            f"{_select('status', [(s, s) for s in STATUSES], status)} "
            f"{_select('type', types, flt.entity_type or '')} "
            f"{_select('decision', decisions, flt.decision or '')} "
            f"{_select('band', bands, band)} {_select('sort', sorts, flt.sort.value)} "
            f"<input name='q' value='{escape(flt.query)}' placeholder='filter by mention'> "
            f"<button type='submit'>Filter</button></form>")


def _pager(flt: ReviewFilter, group: str, found: ReviewPage, offset: int, limit: int) -> str:
    shown = len(found.items)
    first = offset + 1 if shown else 0
    links = []
    if offset > 0:
        back = urlencode(_params(flt, group, max(0, offset - limit), limit))
        links.append(f"<a rel='prev' href='/admin?{back}'>← previous</a>")
    if offset + shown < found.total:
        ahead = urlencode(_params(flt, group, offset + limit, limit))
        links.append(f"<a rel='next' href='/admin?{ahead}'>next →</a>")
    return (f"<div class='pager'><span id='range'>{first}-{offset + shown} of "
            f"<span id='total'>{found.total}</span></span> {' '.join(links)}</div>")


def _bulk(flt: ReviewFilter, found: ReviewPage) -> str:
    if flt.status not in (ReviewStatus.PENDING, None) or not found.total:
        return ""
    pending = found.counts.get(ReviewStatus.PENDING.value, 0)
    return (f"<div class='bulk'>All {pending} pending item(s) this filter selects: "
            f"<button data-action='bulk' data-bulk='approve'>Approve all</button>"
            f"<button data-action='bulk' data-bulk='reject'>Reject all (split off)</button></div>")


def queue_page(views: list[ReviewView], found: ReviewPage, flt: ReviewFilter, group: str,
               offset: int, limit: int, signed: Signed | None = None,
               undoable: dict[str, str] | None = None) -> str:
    """``undoable``: review id -> the live action that decided it (an Undo button)."""
    band = _params(flt, group, offset, limit).get("band", "")
    counts = "".join(f"<span class='count' data-status='{s}'>{s}: {found.counts.get(s, 0)}</span>"
                     for s in STATUSES[:-1])
    bulk_query = escape(urlencode({k: v for k, v in _params(flt, group, 0, 500).items()
                                   if k not in ("offset", "group_id")}))
    cards = "".join(review_card(v, group, (undoable or {}).get(v.item.id)) for v in views) or (
        "<p class='muted'>Nothing to review.</p>")
    body = (f"<div class='counts'>{counts}</div>{_filters(flt, group, limit, band)}"
            f"<div id='bulk-query' data-query='{bulk_query}'></div>{_bulk(flt, found)}"
            f"{_pager(flt, group, found, offset, limit)}<p class='muted' id='help'>{HELP}</p>"
            f"{cards}{_pager(flt, group, found, offset, limit) if views else ''}")
    return page("Review queue", body, group, signed)
