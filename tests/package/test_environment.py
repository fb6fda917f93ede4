from __future__ import annotations

import dataclasses
import os
import platform

import pytest
import torch

import compperf


def test_environment_on_this_cpu():
    env = compperf.environment("cpu")
    assert env.device == "cpu"
    assert env.torch == torch.__version__
    assert env.python == platform.python_version()
    assert env.num_threads == torch.get_num_threads()
    assert env.accelerators == ()
    assert env.cpu
    assert env.device_name == env.cpu
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.device = "cuda"


def test_text_form_is_one_paragraph_with_the_essentials():
    env = compperf.environment()
    text = str(env)
    assert "\n\n" not in text
    assert max(map(len, text.splitlines())) <= 76
    text = " ".join(text.split())  # facts may be wrapped across lines
    for fact in (env.device, env.torch, env.python, env.cpu, f"{env.num_threads} torch thread"):
        assert fact in text


def test_environment_names_a_cuda_device(fake_cuda, monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    env = compperf.environment()
    assert env.device == "cuda:0"
    assert env.device_name == "Fake GPU"
    assert env.accelerators == ("Fake GPU", "Fake GPU")
    assert "CUDA 12.8" in " ".join(str(env).split())


def test_environment_reveals_no_environment_variables(monkeypatch):
    monkeypatch.setenv("COMPPERF_SECRET_TOKEN", "hunter2-secret")
    text = repr(compperf.environment()) + str(compperf.environment())
    assert "hunter2-secret" not in text
    assert os.environ.get("USER", "nobody-at-all") not in text.split()


def test_environment_checks_the_device():
    with pytest.raises(ValueError, match="'cuda:1' is not available here"):
        compperf.environment("cuda:1")
