"""Domain models and ports (Protocols). No I/O lives here."""
