"""The one error a loader raises: a short, human-readable message."""

from __future__ import annotations


class LoaderError(Exception):
    """A source path could not be loaded. ``str(err)`` is a one-line message for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
