"""The admin web UI served at /admin (server-rendered HTML + a little vanilla JS)."""
