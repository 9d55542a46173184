"""Markdown and hard-wrapped text → the pipeline's text shape (one paragraph per line)."""

from __future__ import annotations

from knotwork.ingestion.loaders.markdown import markdown_to_text, unwrap_plain_text


def test_soft_wrapped_paragraph_is_one_line_and_emphasis_is_dropped() -> None:
    text = ("# Team\n\nThe group is run by **Marguerite Okafor**, who joined\n"
            "Helix in 2021. See [the charter](https://x/y) and `conveyor-cli`.\n")
    assert markdown_to_text(text) == (
        "# Team\n\nThe group is run by Marguerite Okafor, who joined Helix in 2021. "
        "See the charter and conveyor-cli.")


def test_identifiers_paths_and_arithmetic_keep_their_characters() -> None:
    text = "my_var_name, snake_case and C:\\data; 2*3*4 and a\\*star"
    assert markdown_to_text(text) == "my_var_name, snake_case and C:\\data; 2*3*4 and a*star"


def test_pipe_table_rows_read_like_confluence_rows() -> None:
    text = "| Name | Role |\n|:---|---:|\n| **Ana Ruiz** | Lead |\n| Bo | |\n"
    assert markdown_to_text(text) == "Name: Ana Ruiz; Role: Lead\nName: Bo"


def test_lists_headings_quotes_rules_and_code() -> None:
    text = ("Title\n=====\n\n* one\n  wrapped\n+ two\n1. three\n\n---\n> quoted\n> more\n\n"
            "```\nkeep  **this**\n```\n<!-- hidden -->\nSub\n---\n")
    assert markdown_to_text(text) == (
        "# Title\n\n- one wrapped\n- two\n- three\n\nquoted more\n\nkeep  **this**\n\n## Sub")


def test_front_matter_is_not_content() -> None:
    assert markdown_to_text("---\ntitle: X\n---\nBody text.") == "Body text."


def test_plain_text_joins_wrapped_prose_only() -> None:
    text = ("Owner: Jo Park\nDue: 2024-06-20\n"
            "This is a long line of prose that goes on and on and was\n"
            "wrapped by an editor. Next.\n- a list item\n")
    assert unwrap_plain_text(text) == (
        "Owner: Jo Park\nDue: 2024-06-20\n"
        "This is a long line of prose that goes on and on and was wrapped by an editor. Next.\n"
        "- a list item")


def test_field_value_pipe_table_rows_are_labelled_values() -> None:
    text = "| Property | Value |\n|---|---|\n| Owner | Ana Ruiz |\n| Stack | Go |\n"
    assert markdown_to_text(text) == "Owner: Ana Ruiz\nStack: Go"
