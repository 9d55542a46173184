"""Render a :class:`Report` as a self-contained HTML page or Markdown (with a side SVG)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from knotwork.communities.layout import render_svg
from knotwork.communities.report import CitationRef, Report, ReportFact, report_json

MAP_FILE = "community-map.svg"

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1f27;
background:#fff}main{max-width:980px;margin:0 auto;padding:24px}h1{margin:0 0 4px}
.meta{color:#5d6275;margin:0 0 20px}section.c{border:1px solid #e3e5ee;border-radius:8px;
padding:12px 16px;margin:14px 0}section.c h3{margin:4px 0}.tag{display:inline-block;
background:#eef0f7;border-radius:10px;padding:0 8px;margin:2px 4px 2px 0;font-size:13px}
.stale{color:#a15c00;font-size:13px}ol.facts li{margin:4px 0}.cite{font-size:12px;
color:#5d6275}.cite a{color:#3159c4}table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;
text-align:left;vertical-align:top}figure{margin:8px 0}.num{color:#5d6275;font-size:13px}
"""


def _cite_html(citation: CitationRef) -> str:
    label = escape(citation.title or citation.episode_id)
    where = escape(f"{citation.source_system}:{citation.source_id}" if citation.source_system
                   else citation.episode_id)
    if citation.url:
        return f'<a href="{escape(citation.url, quote=True)}">{label}</a> ({where})'
    return f"{label} ({where})"


def _fact_html(fact: ReportFact) -> str:
    cites = "; ".join(_cite_html(c) for c in fact.citations)
    ended = f" <em>(no longer valid since {fact.invalid_at:%Y-%m-%d})</em>" if fact.invalid_at else ""
    return (f"<li>{escape(fact.text)}{ended}"
            + (f'<div class="cite">{cites}</div>' if cites else "") + "</li>")


def render_html(report: Report) -> str:
    svg = render_svg(report.map_nodes, report.map_edges)
    legend = "".join(f"<tr><td><b>{escape(n.label)}</b></td><td>{escape(n.name)}</td>"
                     f"<td class='num'>{n.size}</td></tr>" for n in report.map_nodes)
    blocks = []
    for i, c in enumerate(report.communities, 1):
        topics = "".join(f'<span class="tag">{escape(t)}</span>' for t in c.key_topics)
        people = ", ".join(f"{escape(e.name)} <span class='num'>({escape(e.type.lower())})</span>"
                           for e in c.key_entities)
        facts = "".join(_fact_html(f) for f in c.facts)
        stale = '<span class="stale"> · summary pending refresh</span>' if c.summary_stale else ""
        blocks.append(
            f'<section class="c" id="{escape(c.id, quote=True)}"><h3>C{i}. {escape(c.name)}</h3>'
            f'<div class="num">level {c.level} · {c.entity_count} entities · density '
            f"{c.internal_density:.2f} · external {c.external_connectivity:.2f}{stale}</div>"
            f"<p>{escape(c.summary)}</p><div>{topics}</div>"
            + (f"<p><b>Key entities:</b> {people}</p>" if people else "")
            + (f'<ol class="facts">{facts}</ol>' if facts else "") + "</section>")
    changes = report.changes
    if changes.since is None:
        change_html = "<p>First report for this tenant: nothing to compare with yet.</p>"
    else:
        new = ", ".join(escape(e.name) for e in changes.new_entities) or "none"
        gone = "".join(_fact_html(f) for f in changes.invalidated_facts)
        change_html = (
            f"<p>Since {changes.since:%Y-%m-%d %H:%M} UTC: {changes.new_entity_count} new "
            f"entities, {changes.new_fact_count} new facts, {changes.invalidated_count} facts "
            f"no longer valid.</p><p><b>New entities:</b> {new}</p>"
            + (f"<p><b>Facts invalidated:</b></p><ol class='facts'>{gone}</ol>" if gone else ""))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>Knotwork digest · {escape(report.group_id)}</title><style>{_CSS}</style>"
        f"</head><body><main><h1>Knowledge digest</h1><p class='meta'>tenant "
        f"{escape(report.group_id)} · generated {report.generated_at:%Y-%m-%d %H:%M} UTC · level "
        f"{report.level} of {report.max_level} · {report.community_count} communities, top "
        f"{len(report.communities)} shown</p>"
        f"<h2>What changed</h2>{change_html}"
        f"<h2>Community map</h2><figure>{svg}</figure><table>{legend}</table>"
        f"<h2>Communities</h2>{''.join(blocks)}</main></body></html>\n")


def _cite_md(citation: CitationRef) -> str:
    where = (f"{citation.source_system}:{citation.source_id}" if citation.source_system
             else citation.episode_id)
    title = (citation.title or citation.episode_id).replace("]", "\\]")
    return f"[{title}]({citation.url}) ({where})" if citation.url else f"{title} ({where})"


def _fact_md(fact: ReportFact) -> list[str]:
    ended = f" *(no longer valid since {fact.invalid_at:%Y-%m-%d})*" if fact.invalid_at else ""
    lines = [f"1. {' '.join(fact.text.split())}{ended}"]
    if fact.citations:
        lines.append("   — " + "; ".join(_cite_md(c) for c in fact.citations))
    return lines


def render_markdown(report: Report, map_file: str = MAP_FILE) -> str:
    out = [f"# Knowledge digest — {report.group_id}", "",
           (f"Generated {report.generated_at:%Y-%m-%d %H:%M} UTC · level {report.level} of "
            f"{report.max_level} · {report.community_count} communities, top "
            f"{len(report.communities)} shown."), "", "## What changed", ""]
    changes = report.changes
    if changes.since is None:
        out.append("First report for this tenant: nothing to compare with yet.")
    else:
        out.append(f"Since {changes.since:%Y-%m-%d %H:%M} UTC: {changes.new_entity_count} new "
                   f"entities, {changes.new_fact_count} new facts, {changes.invalidated_count} "
                   "facts no longer valid.")
        if changes.new_entities:
            out += ["", "New entities: " + ", ".join(e.name for e in changes.new_entities)]
        if changes.invalidated_facts:
            out += ["", "Facts invalidated:", ""]
            for fact in changes.invalidated_facts:
                out += _fact_md(fact)
    out += ["", "## Community map", "", f"![Community map]({map_file})", "",
            "| | community | members |", "|---|---|---|"]
    out += [f"| {n.label} | {n.name.replace('|', '/')} | {n.size} |" for n in report.map_nodes]
    out += ["", "## Communities"]
    for i, c in enumerate(report.communities, 1):
        out += ["", f"### C{i}. {c.name}", "",
                f"*level {c.level} · {c.entity_count} entities"
                + (" · summary pending refresh" if c.summary_stale else "") + "*", "", c.summary]
        if c.key_topics:
            out += ["", "Topics: " + ", ".join(c.key_topics)]
        if c.key_entities:
            out += ["", "Key entities: " + ", ".join(f"{e.name} ({e.type.lower()})"
                                                      for e in c.key_entities)]
        if c.facts:
            out += ["", "Key facts:", ""]
            for fact in c.facts:
                out += _fact_md(fact)
    return "\n".join(out) + "\n"


def write_report(report: Report, out_dir: Path) -> dict[str, Path]:
    """report.html (self-contained), report.md + community-map.svg, report.json."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "html": (out_dir / "report.html", render_html(report)),
        "markdown": (out_dir / "report.md", render_markdown(report)),
        "map": (out_dir / MAP_FILE, render_svg(report.map_nodes, report.map_edges) + "\n"),
        "json": (out_dir / "report.json", report_json(report) + "\n"),
    }
    for path, body in files.values():
        path.write_text(body, "utf-8")
    return {kind: path for kind, (path, _) in files.items()}


