"""Print the warnings a step raises, so that they show on the page instead of in a log."""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator

from compperf.i18n import tr

__all__ = ["shown_warnings"]


@contextlib.contextmanager
def shown_warnings(
    pattern: str, category: type[Warning] = DeprecationWarning
) -> Iterator[list[str]]:
    """Print each warning whose message matches ``pattern``, once; pass all others on.

    The line is in the reader's language (``compperf.use_language``); the warning's
    message is printed as it was raised.

    Parameters
    ----------
    pattern : str
        Regular expression matched, ignoring case, against the start of the
        message, as ``warnings.filterwarnings`` matches it.
    category : type of Warning, default DeprecationWarning
        Only warnings of this category (or a subclass) are printed.

    Yields
    ------
    list of str
        Filled, when the block ends, with the distinct messages that were printed.

    Notes
    -----
    Matching warnings are shown even where a filter would hide or raise them (a
    script's ``DeprecationWarning`` is hidden by default, a test's may be an error);
    every other warning is re-issued after the block, under the filters in force.
    For example, ``torch.jit.script`` warns that TorchScript is deprecated:

    >>> with shown_warnings(r"`torch\\.jit\\."):  # doctest: +SKIP
    ...     scripted = torch.jit.script(model)
    DeprecationWarning caught: `torch.jit.script` is deprecated. ...
    """
    shown: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", pattern, category)
        yield shown
    matcher = re.compile(pattern, re.IGNORECASE)
    for warning in caught:
        message = str(warning.message)
        if issubclass(warning.category, category) and matcher.match(message):
            if message not in shown:
                # The warning's own text is torch's, as it was raised.
                print(
                    tr(
                        "{category} caught: {message}",
                        category=warning.category.__name__,
                        message=message,
                    )
                )
                shown.append(message)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
