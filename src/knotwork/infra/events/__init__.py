"""EventQueue adapters: Redis Streams (production and the embedded FalkorDB) and in-memory."""
