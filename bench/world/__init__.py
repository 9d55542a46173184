"""A seeded synthetic enterprise world with ground truth (see bench/world/build.py)."""

from __future__ import annotations

from bench.world.build import Summary, generate_world
from bench.world.generator import build_world

__all__ = ["Summary", "build_world", "generate_world"]
