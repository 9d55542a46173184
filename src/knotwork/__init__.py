"""Knotwork: enterprise GraphRAG."""
