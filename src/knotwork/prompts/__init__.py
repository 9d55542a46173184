"""Knotwork's LLM prompts: one module per prompt.

Each module owns ``NAME``, ``VERSION`` (bumped whenever the wording or the models change; the
pair is logged with every call and stored with what the output produced), a typed ``Input``,
a typed ``Output`` (its strict JSON schema is sent to the endpoint; lists carry ``max_length``
so small models cannot loop) and ``render(Input) -> list[ChatMessage]``.
"""
