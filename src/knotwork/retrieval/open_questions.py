"""Open questions: ones answered by several sentences, not by one value.

"How did the team's on-call change?", "Why did we move the data?", "Describe the rollout" ask
for an account; "Who leads X?" or "When did Y go live?" for one value. An open question's
answer is the best few distinct evidence sentences (up to a word budget) instead of the best one
or two. The wording rules are data (:data:`OPEN_QUESTIONS`: a name and a pattern each, first
match wins; ``bench.open_questions`` prints each one's hit rate on a question set), as are the
imperative verbs a question may open with (:data:`QUESTION_VERBS`), which are the question's own
words and never the start of a name it states ("Describe Acme's rollout": Acme).
"""

from __future__ import annotations

import re

__all__ = ["OPEN_QUESTIONS", "QUESTION_VERBS", "open_question", "without_question_verb"]

# imperatives a question may open with (lower case)
QUESTION_VERBS: frozenset[str] = frozenset({
    "describe", "summarise", "summarize", "explain", "outline", "recap", "list", "name", "tell",
    "give", "show", "compare", "detail", "walk", "review", "sketch", "characterise",
    "characterize", "present", "identify",
})

# (name, pattern): the first that matches the question makes it open
OPEN_QUESTIONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("imperative-account",
         (r"^\s*(?:please\s+)?(?:describe|summari[sz]e|explain|outline|recap|detail|sketch|"
         r"characteri[sz]e|walk\s+(?:me|us)\s+through|tell\s+(?:me|us)\s+(?:about|how|why|what))\b")),
        ("how-process",  # how a thing works / changed / is done, not how much or how many
         (r"(?:^\s*|[,;]\s*|\band\s+)how\s+(?!much\b|many\b|long\b|old\b|often\b|far\b|big\b|large\b|soon\b)"
         r"(?:do|does|did|has|have|had|is|are|was|were|will|would|can|could|should)\b")),
        ("why", r"(?:^\s*|[,;]\s*|\band\s+)why\b"),
        ("what-caused", r"^\s*what\s+(?:caused|led\s+to|drove|triggered)\b"),
        ("main-points",  # the main / major / key things of a kind: several of them
         (r"^\s*what\s+(?:were|are|have\s+been)\s+(?:the\s+|\w+(?:'s|’s)\s+)?"
         r"(?:main|major|key|biggest|most\s+important)\b")),
        ("what-happened", r"\bwhat\s+(?:has\s+|had\s+)?happened\b|\bwhat\s+changed\b"),
        ("what-was-done",
         r"^\s*what\s+(?:has|have|had|did)\s+.{2,80}?\s+(?:done|do)\b(?!\s+(?:with|for)\b)"),
        ("what-role", r"^\s*what\s+(?:roles?|parts?)\s+(?:does|do|did|has|have|had|will)\b"),
    ))


def open_question(question: str) -> str | None:
    """The name of the first open-question rule the question matches, or None."""
    for name, pattern in OPEN_QUESTIONS:
        if pattern.search(question):
            return name
    return None


def without_question_verb(name: str, question: str) -> str:
    """A name found at the very start of a question, less an imperative the question opens
    with ("Describe Acme" in "Describe Acme's rollout." is Acme); '' when nothing is left."""
    words = name.split()
    if words and words[0].lower() in QUESTION_VERBS and question.lstrip().startswith(words[0]):
        return " ".join(words[1:]).removeprefix("the ").strip()
    return name
