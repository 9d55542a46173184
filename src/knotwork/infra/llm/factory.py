"""Build the configured LLM client, or none: no ``llm_base_url`` means no LLM."""

from __future__ import annotations

from knotwork.domain.ports import LLMClient
from knotwork.settings import Settings


def create_llm_client(settings: Settings) -> LLMClient | None:
    if not settings.llm_base_url:
        return None
    from knotwork.infra.llm.openai_compat import OpenAICompatClient

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAICompatClient(
        settings.llm_base_url,
        model=settings.llm_model,
        api_key=key,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        max_tokens=settings.llm_max_tokens,
        temperature=settings.llm_temperature,
        json_mode=settings.llm_json_mode,
        max_backoff_s=settings.llm_max_backoff_s,
    )
