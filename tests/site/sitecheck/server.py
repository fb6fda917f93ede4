"""Serve a built site on localhost from a background thread."""

from __future__ import annotations

import contextlib
import functools
import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["serve"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output free of one line per request."""


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A browser that leaves a page mid-response closes the connection: not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(root: Path, port: int = 0) -> Iterator[str]:
    """Serve ``root`` at ``http://127.0.0.1:<port>/`` while the block runs; yield that URL.

    Port 0 picks a free port. A taken fixed port raises ``OSError`` naming it.
    """
    handler = functools.partial(_QuietHandler, directory=str(root))
    try:
        server = _Server(("127.0.0.1", port), handler)
    except OSError as error:
        raise OSError(f"cannot serve {root} on 127.0.0.1:{port}: {error}") from error
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
