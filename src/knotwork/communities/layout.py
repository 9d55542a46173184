"""The community map: communities as nodes (sized by members), edges by cross-links, laid out
by a small deterministic force-directed (Fruchterman-Reingold) pass, drawn as inline SVG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from pydantic import BaseModel, ConfigDict

from knotwork.domain.models import Community, Fact

WIDTH, HEIGHT, MARGIN = 760, 480, 48
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac")


class MapNode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    label: str  # short tag shown on the map ("C1", "C2", ...)
    name: str
    size: int
    x: float
    y: float


class MapEdge(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    target: str
    weight: int  # facts linking members of the two communities


def community_map(communities: Sequence[Community], facts: Sequence[Fact]
                  ) -> tuple[list[MapNode], list[MapEdge]]:
    """Nodes in the given order (tagged C1, C2, ...), edges between distinct communities."""
    owner: dict[str, str] = {}
    for community in communities:
        for entity in community.entity_ids:
            owner.setdefault(entity, community.id)
    links: dict[tuple[str, str], int] = {}
    for fact in facts:
        a, b = owner.get(fact.source_id), owner.get(fact.target_id)
        if a is None or b is None or a == b:
            continue
        key = (a, b) if a < b else (b, a)
        links[key] = links.get(key, 0) + 1
    ids = [c.id for c in communities]
    positions = _layout(ids, links)
    nodes = [MapNode(id=c.id, label=f"C{i}", name=c.name, size=c.entity_count,
                     x=round(positions[c.id][0], 1), y=round(positions[c.id][1], 1))
             for i, c in enumerate(communities, 1)]
    edges = [MapEdge(source=a, target=b, weight=w) for (a, b), w in sorted(links.items())]
    return nodes, edges


def _layout(ids: Sequence[str], links: dict[tuple[str, str], int],
            iterations: int = 200) -> dict[str, tuple[float, float]]:
    n = len(ids)
    if n == 0:
        return {}
    if n == 1:
        return {ids[0]: (WIDTH / 2, HEIGHT / 2)}
    # start on a circle (deterministic), then spring-embed
    pos = [[math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)] for i in range(n)]
    index = {c: i for i, c in enumerate(ids)}
    edges = [(index[a], index[b], w) for (a, b), w in links.items() if a in index and b in index]
    k = math.sqrt(4.0 / n)
    temperature = 0.2
    for _ in range(iterations):
        disp = [[0.0, 0.0] for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
                dist = max(math.hypot(dx, dy), 1e-3)
                force = k * k / dist
                disp[i][0] += dx / dist * force
                disp[i][1] += dy / dist * force
                disp[j][0] -= dx / dist * force
                disp[j][1] -= dy / dist * force
        for i, j, w in edges:
            dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
            dist = max(math.hypot(dx, dy), 1e-3)
            force = dist * dist / k * (1.0 + math.log(w))
            disp[i][0] -= dx / dist * force
            disp[i][1] -= dy / dist * force
            disp[j][0] += dx / dist * force
            disp[j][1] += dy / dist * force
        for i in range(n):
            length = max(math.hypot(*disp[i]), 1e-9)
            step = min(length, temperature)
            pos[i][0] += disp[i][0] / length * step
            pos[i][1] += disp[i][1] / length * step
            pos[i][0] -= pos[i][0] * 0.01  # gentle gravity keeps components together
            pos[i][1] -= pos[i][1] * 0.01
        temperature = max(temperature * 0.98, 0.005)
    xs, ys = [p[0] for p in pos], [p[1] for p in pos]
    span_x, span_y = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    return {c: (MARGIN + (pos[i][0] - min(xs)) / span_x * (WIDTH - 2 * MARGIN),
                MARGIN + (pos[i][1] - min(ys)) / span_y * (HEIGHT - 2 * MARGIN))
            for c, i in index.items()}


def render_svg(nodes: Sequence[MapNode], edges: Sequence[MapEdge]) -> str:
    """A self-contained SVG document (no external fonts, scripts or images)."""
    by_id = {n.id: n for n in nodes}
    biggest = max((n.size for n in nodes), default=1) or 1
    heaviest = max((e.weight for e in edges), default=1) or 1
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
              f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="Community map" '
              'font-family="sans-serif">'),
             '<title>Community map: communities sized by members, linked by cross-links</title>',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fbfbfd"/>']
    for edge in edges:
        a, b = by_id[edge.source], by_id[edge.target]
        width = 1.0 + 5.0 * edge.weight / heaviest
        parts.append(f'<line x1="{a.x}" y1="{a.y}" x2="{b.x}" y2="{b.y}" stroke="#8a8fa3" '
                     f'stroke-opacity="0.55" stroke-width="{width:.1f}">'
                     f'<title>{escape(a.label)} – {escape(b.label)}: {edge.weight} links</title>'
                     '</line>')
    for i, node in enumerate(nodes):
        radius = 8.0 + 26.0 * math.sqrt(node.size / biggest)
        color = PALETTE[i % len(PALETTE)]
        parts.append(f'<g><circle cx="{node.x}" cy="{node.y}" r="{radius:.1f}" fill="{color}" '
                     f'fill-opacity="0.85" stroke="#ffffff" stroke-width="1.5">'
                     f'<title>{escape(node.label)}: {escape(node.name)} ({node.size} members)'
                     f'</title></circle>'
                     f'<text x="{node.x}" y="{node.y + 4:.1f}" text-anchor="middle" '
                     f'font-size="11" fill="#111">{escape(node.label)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
