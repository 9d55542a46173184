"""HTML of the admin pages. Every value is escaped; no template engine, no build step."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from knotwork.resolution.models import (
    AuditEntry,
    EntityAction,
    MentionExample,
    MentionRow,
    ReviewCandidate,
    ReviewStatus,
)
from knotwork.resolution.workflow import EntityView, ReviewView, SearchHit

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f5f6f8}
header{background:#1d2430;color:#fff;padding:10px 20px;display:flex;gap:20px;align-items:center}
header a{color:#cfe0ff;text-decoration:none} main{padding:16px 20px}
.review{background:#fff;border:1px solid #d6dae1;border-radius:6px;margin:0 0 16px;padding:12px}
.side{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
.entity{border:1px solid #e3e6ea;border-radius:4px;padding:8px;background:#fafbfc}
.entity.attached{border-color:#3b7ddd} .scores td{padding:0 8px 0 0}
.snippet{color:#4b5563;font-size:12px;margin:4px 0} .muted{color:#6b7280}
button{margin:4px 4px 0 0;padding:4px 10px;cursor:pointer} table{border-collapse:collapse}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eceff3;vertical-align:top}
#status.ok{color:#166534} #status.error{color:#b91c1c} mark{background:#fde68a}
.review.focus{outline:2px solid #3b7ddd} .pager{margin:8px 0} .counts span{margin-right:12px}
"""


@dataclass(frozen=True)
class Signed:
    """Who is signed in (shown in the header) and the session's CSRF token ("" for a key
    sent as a header, which needs none)."""

    actor: str = ""
    csrf: str = ""


def page(title: str, body: str, group: str, signed: Signed | None = None) -> str:
    signed = signed or Signed()
    who = (f"<span class='muted' id='actor'>signed in as {escape(signed.actor)}</span>"
           if signed.actor else "")
    out = ("<button data-action='logout' id='logout'>Sign out</button>" if signed.csrf else "")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='csrf-token' content='{escape(signed.csrf)}'>"
            f"<title>{escape(title)} · Knotwork admin</title><style>{CSS}</style></head>"
            f"<body data-group='{escape(group)}'><header><strong>Knotwork admin</strong>"
            f"<a href='/admin?group_id={quote(group)}'>Review queue</a>"
            f"<a href='/admin/entities?group_id={quote(group)}'>Entities</a>"
            f"<span class='muted'>tenant {escape(group)}</span>{who}{out}</header><main>"
            f"<h1>{escape(title)}</h1><p id='status' role='status'></p>{body}</main>"
            f"<script src='/admin/admin.js'></script></body></html>")


def login_page(message: str = "") -> str:
    body = (f"<p>{escape(message)}</p><form method='post' action='/admin/login' id='login-form'>"
            f"<label>Admin API key <input id='admin-key' name='key' type='password' "
            f"autocomplete='off' required autofocus></label> "
            f"<button type='submit' id='login'>Sign in</button></form>")
    return page("Sign in", body, "")


def _scores(c: ReviewCandidate | None) -> str:
    if c is None:
        return ""
    def fmt(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"
    return (f"<table class='scores'><tr><td>total</td><td class='score-total'>{c.score:.3f}</td>"
            f"<td>name</td><td>{fmt(c.name_score)} ({escape(c.name_level)})</td></tr>"
            f"<tr><td>embedding</td><td>{fmt(c.embedding_score)}</td>"
            f"<td>type</td><td>{fmt(c.type_score)}</td></tr></table>")


def highlight(snippet: str, mention: str) -> str:
    """The snippet escaped, with the mention's occurrences in <mark>."""
    if not mention.strip():
        return escape(snippet)
    parts = re.split(f"({re.escape(mention)})", snippet, flags=re.IGNORECASE)
    return "".join(f"<mark>{escape(p)}</mark>" if i % 2 else escape(p) for i, p in enumerate(parts))


def _example(m: MentionExample, mention: str) -> str:
    title = escape(m.document_title or m.chunk_id)
    source = (f"<a class='source' href='{escape(m.document_url)}'>{title}</a>"
              if m.document_url and m.document_url.startswith(("http://", "https://"))
              else f"<span class='source'>{title}</span>")
    return f"<div class='snippet'>“…{highlight(m.snippet, mention or m.text)}…” — {source}</div>"


def entity_card(view: EntityView, candidate: ReviewCandidate | None, attached: bool,
                review_id: str | None, group: str, mention: str = "") -> str:
    e = view.entity
    examples = "".join(_example(m, mention) for m in view.examples) or (
        "<div class='muted'>no stored mentions</div>")
    action = ""
    if review_id and not attached:
        action = (f"<button data-action='merge-into' data-review='{escape(review_id)}' "
                  f"data-target='{escape(e.id)}'>Merge into {escape(e.name)}</button>")
    return (f"<div class='entity{' attached' if attached else ''}' data-entity-id='{escape(e.id)}'>"
            f"<div><a href='/admin/entities/{quote(e.id)}?group_id={quote(group)}'>"
            f"<strong class='entity-name'>{escape(e.name)}</strong></a> "
            f"<span class='muted'>{escape(e.type.value)}{' · attached' if attached else ''}</span></div>"
            f"<div class='muted'>{escape(e.id)}</div>"
            f"<div>aliases: <span class='aliases'>{escape(', '.join(e.aliases) or '—')}</span></div>"
            f"<div>mentions: {view.mentions_count}</div>"
            f"<div>{escape(e.summary or '')}</div>{_scores(candidate)}{examples}{action}</div>")


def review_card(view: ReviewView, group: str, undo_action: str | None = None) -> str:
    item = view.item
    by_id = {c.entity_id: c for c in item.candidates}
    cards = "".join(entity_card(v, by_id.get(v.entity.id), v.entity.id == item.entity_id,
                                item.id if item.status is ReviewStatus.PENDING else None, group,
                                item.mention)
                    for v in view.entities)
    buttons = ""
    if item.status is ReviewStatus.PENDING:
        rid = escape(item.id)
        buttons = (f"<button data-action='approve' data-review='{rid}'>Approve</button>"
                   f"<button data-action='reject' data-review='{rid}'>Reject (split off)</button>"
                   f"<input id='target-{rid}' placeholder='entity id' size='38'>"
                   f"<button data-action='merge-into' data-review='{rid}'>Merge into id</button>")
    elif undo_action:
        buttons = (f"<button data-action='undo' data-action-id='{escape(undo_action)}'>"
                   f"Undo {escape(item.status.value)}</button>")
    return (f"<section class='review' data-review-id='{escape(item.id)}'>"
            f"<div><strong>“{escape(item.mention)}”</strong> ({escape(item.entity_type)}) · "
            f"decision <code>{escape(item.decision)}</code> · score {item.score:.3f} · "
            f"<span class='review-status'>{escape(item.status.value)}</span> · "
            f"{len(item.episode_ids)} mention(s) affected</div>"
            f"{'<div class=muted>' + escape(item.outcome or '') + '</div>' if item.outcome else ''}"
            f"<div class='side'>{cards}</div>{buttons}</section>")


def search_page(hits: list[SearchHit], group: str, query: str,
                signed: Signed | None = None) -> str:
    form = (f"<form method='get' action='/admin/entities'><input type='hidden' name='group_id' "
            f"value='{escape(group)}'><input name='q' value='{escape(query)}' "
            f"placeholder='name, alias, handle'> <button type='submit'>Search</button></form>")
    rows = "".join(
        f"<tr><td><a href='/admin/entities/{quote(h.entity.id)}?group_id={quote(group)}'>"
        f"{escape(h.entity.name)}</a></td><td>{escape(h.entity.type.value)}</td>"
        f"<td>{escape(', '.join(h.entity.aliases))}</td><td>{h.score:.3f}</td></tr>" for h in hits)
    table = f"<table><tr><th>name</th><th>type</th><th>aliases</th><th>score</th></tr>{rows}</table>"
    return page("Entities", form + (table if query else ""), group, signed)


def _mentions(entity_id: str, rows: list[MentionRow]) -> str:
    """Every stored mention with a checkbox; the selection is split off (or moved)."""
    forms: dict[str, int] = {}
    for r in rows:
        forms[r.text] = forms.get(r.text, 0) + 1
    summary = ", ".join(f"{escape(f)} ×{n}" for f, n in sorted(forms.items(), key=lambda x: -x[1]))
    lines = "".join(
        f"<tr class='mention'><td><input type='checkbox' class='pick' value='{escape(r.id)}' "
        f"data-form='{escape(r.text)}' data-document='{escape(r.document_id)}'></td>"
        f"<td class='form'>{escape(r.text)}</td><td>{escape(r.document_title or r.document_id)}"
        f"</td></tr>" for r in rows)
    return (f"<h2>Mentions ({len(rows)})</h2><p class='muted'>forms: {summary or '—'}</p>"
            f"<table id='mentions'><tr><th></th><th>as written</th><th>document</th></tr>{lines}"
            f"</table><p><input id='split-name' placeholder='new entity name (optional)' size='30'> "
            f"<input id='split-into' placeholder='or move into entity id' size='38'> "
            f"<button data-action='split' data-entity='{escape(entity_id)}' id='split'>"
            f"Split selected mentions</button></p>")


def _actions(actions: list[EntityAction]) -> str:
    rows = "".join(
        f"<tr class='entity-action'><td>{escape(a.created_at.isoformat(timespec='seconds'))}</td>"
        f"<td>{escape(a.kind.value)}</td><td>{a.snapshot.moved_mentions} mention(s), "
        f"{len(a.snapshot.moved_facts)} fact(s)</td><td>{escape(a.actor)}</td><td>"
        + (f"undone {escape(a.undone_at.isoformat(timespec='seconds'))}" if a.undone_at else
           f"<button data-action='undo' data-action-id='{escape(a.id)}'>Undo</button>")
        + "</td></tr>" for a in actions)
    return (f"<h2>Actions</h2><table id='actions'><tr><th>when</th><th>action</th><th>moved</th>"
            f"<th>by</th><th></th></tr>{rows}</table>")


def entity_page(view: EntityView, trail: list[AuditEntry], group: str,
                signed: Signed | None = None, mentions: list[MentionRow] | None = None,
                actions: list[EntityAction] | None = None) -> str:
    merges = "".join(
        f"<tr class='merge'><td>{escape(m.created_at.isoformat())}</td>"
        f"<td>{escape(', '.join(m.source_ids))}</td><td>{escape(m.actor)}</td><td>"
        + (f"undone {escape(m.undone_at.isoformat())}" if m.undone_at else
           f"<button data-action='unmerge' data-merge='{escape(m.id)}'>Unmerge</button>")
        + "</td></tr>" for m in view.merges)
    audit = "".join(f"<tr class='audit'><td>{escape(a.created_at.isoformat())}</td>"
                    f"<td class='audit-action'>{escape(a.action)}</td><td>{escape(a.detail)}</td></tr>"
                    for a in trail)
    facts = "".join(f"<li>{escape(f.fact)} <span class='muted'>{escape(f.type.value)}</span></li>"
                    for f in view.relationships)
    body = (entity_card(view, None, False, None, group)
            + f"<h2>Facts</h2><ul>{facts}</ul>"
            + f"<h2>Merges</h2><table><tr><th>when</th><th>merged</th><th>by</th><th></th></tr>"
              f"{merges}</table>"
            + _mentions(view.entity.id, mentions or [])
            + _actions(actions or [])
            + f"<h2>Audit trail</h2><table id='audit'><tr><th>when</th><th>action</th>"
              f"<th>detail</th></tr>{audit}</table>")
    return page(view.entity.name, body, group, signed)
