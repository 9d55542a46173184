"""Job queue adapters (Redis Streams). See :class:`knotwork.domain.ports.JobQueue`."""
