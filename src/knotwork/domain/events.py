"""Typed events carried by the :class:`knotwork.domain.ports.EventQueue` (design doc 003,
"Queue Message Formats"). Serialised as JSON; ``event_type`` selects the model."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

COMMUNITY_TOPIC = "communities"


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    group_id: str
    timestamp: datetime


class CommunityUpdated(_Event):
    """A community's membership or summary changed (``summary_stale``: not yet re-summarized)."""

    event_type: Literal["COMMUNITY_UPDATED"] = "COMMUNITY_UPDATED"
    community_id: str
    level: int
    entity_count: int
    summary_stale: bool


class CommunitiesRebuilt(_Event):
    """A full re-detection replaced every community of the tenant."""

    event_type: Literal["COMMUNITIES_REBUILT"] = "COMMUNITIES_REBUILT"
    community_count: int
    levels: int


Event = Annotated[CommunityUpdated | CommunitiesRebuilt, Field(discriminator="event_type")]
EVENT_ADAPTER: TypeAdapter[CommunityUpdated | CommunitiesRebuilt] = TypeAdapter(Event)


class Delivery(BaseModel):
    """One event handed to a consumer; acknowledge it with its ``message_id``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topic: str
    message_id: str
    event: Event
    deliveries: int = 1  # >1 when re-delivered after a consumer failed to ack


def encode_event(event: CommunityUpdated | CommunitiesRebuilt) -> str:
    return event.model_dump_json()


def decode_event(data: str | bytes) -> CommunityUpdated | CommunitiesRebuilt:
    return EVENT_ADAPTER.validate_json(data)
