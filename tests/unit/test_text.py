from knotwork.domain.text import clean_text, clean_value


def test_clean_text_removes_nul_and_replaces_lone_surrogates() -> None:
    assert clean_text("plain ünïcode 😀") == "plain ünïcode 😀"
    assert clean_text("a\x00b") == "ab"
    assert clean_text("x\ud83dy\udfffz") == "x\ufffdy\ufffdz"


def test_clean_value_walks_containers() -> None:
    value = {"rows": [{"name": "a\x00", "n": 3, "tags": ("\ud800", "ok")}], "k\x00": None}
    assert clean_value(value) == {"rows": [{"name": "a", "n": 3, "tags": ("\ufffd", "ok")}],
                                  "k": None}


def test_an_answer_says_each_sentence_once() -> None:
    from knotwork.retrieval.sentences import join_answer

    assert join_answer(["Kestrel is the ledger. It posts journals.", "Kestrel is the ledger",
                        "Bo leads it."]) == "Kestrel is the ledger. It posts journals. Bo leads it."
