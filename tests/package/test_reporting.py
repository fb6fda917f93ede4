from __future__ import annotations

import warnings

import pytest

import compperf


def test_matching_warnings_are_printed_once_each(capsys):
    with compperf.shown_warnings(r"`old\.api") as shown:
        for _ in range(3):
            warnings.warn("`old.api` is deprecated", DeprecationWarning, stacklevel=1)
        warnings.warn("`old.api2` is deprecated too", DeprecationWarning, stacklevel=1)
    assert shown == ["`old.api` is deprecated", "`old.api2` is deprecated too"]
    assert capsys.readouterr().out == (
        "DeprecationWarning caught: `old.api` is deprecated\n"
        "DeprecationWarning caught: `old.api2` is deprecated too\n"
    )


def test_other_warnings_pass_through_under_the_filters_in_force(capsys):
    # pytest's filterwarnings = error is in force: a warning passed on must raise.
    with pytest.raises(UserWarning, match="unrelated"), compperf.shown_warnings(r"`old\.api"):
        warnings.warn("unrelated", UserWarning, stacklevel=1)
    with (
        pytest.raises(DeprecationWarning, match="another"),
        compperf.shown_warnings(r"`old\.api"),
    ):
        warnings.warn("another deprecation", DeprecationWarning, stacklevel=1)
    assert capsys.readouterr().out == ""


def test_only_the_given_category_is_shown(capsys):
    with (
        pytest.warns(FutureWarning, match="old"),
        compperf.shown_warnings("`old", category=DeprecationWarning),
    ):
        warnings.warn("`old` changes", FutureWarning, stacklevel=1)
    assert capsys.readouterr().out == ""
