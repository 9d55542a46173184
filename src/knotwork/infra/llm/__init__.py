"""LLM adapters of :class:`knotwork.domain.ports.LLMClient` (built by ``factory``)."""
