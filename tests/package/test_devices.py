from __future__ import annotations

import pytest
import torch

import compperf

CPU = torch.device("cpu")


def test_cpu_only_machine_falls_back_to_cpu():
    assert compperf.num_gpus() == 0
    assert compperf.try_gpu() == CPU
    assert compperf.try_gpu(3) == CPU
    assert compperf.try_all_gpus() == [CPU]


def test_cuda_devices_are_found(fake_cuda):
    assert compperf.num_gpus() == 2
    assert compperf.try_gpu() == torch.device("cuda", 0)
    assert compperf.try_gpu(1) == torch.device("cuda", 1)
    assert compperf.try_gpu(2) == CPU
    assert compperf.try_all_gpus() == [torch.device("cuda", 0), torch.device("cuda", 1)]


def test_mps_counts_as_one_gpu(fake_mps):
    assert compperf.num_gpus() == 1
    assert compperf.try_gpu() == torch.device("mps", 0)
    assert compperf.try_gpu(1) == CPU
    assert compperf.try_all_gpus() == [torch.device("mps", 0)]


def test_negative_index_is_refused():
    with pytest.raises(ValueError, match="must be >= 0, got -1"):
        compperf.try_gpu(-1)


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("cuda", r"device 'cuda' is not available here \(found: cpu\)"),
        ("cuda:3", r"device 'cuda:3' is not available here \(found: cpu\)"),
        ("mps", r"device 'mps' is not available here \(found: cpu\)"),
        ("gpu0", r"device 'gpu0' is not a device torch understands \(available here: cpu\)"),
        ("cuda:-1", r"'cuda:-1' is not a device torch understands"),
    ],
)
def test_bad_devices_name_the_device_and_what_exists(device, message):
    with pytest.raises(ValueError, match=message):
        compperf.as_device(device)


def test_missing_cuda_index_lists_the_fake_devices(fake_cuda):
    with pytest.raises(ValueError, match=r"'cuda:5' is not available here \(found: cuda:0, "):
        compperf.as_device("cuda:5")


def test_as_device_accepts_strings_devices_and_none(fake_cuda):
    assert compperf.as_device("cpu") == CPU
    assert compperf.as_device(torch.device("cuda", 1)) == torch.device("cuda", 1)
    assert compperf.as_device("cuda") == torch.device("cuda", 0)
    assert compperf.as_device(None) == torch.device("cuda", 0)


def test_as_device_rejects_other_types():
    with pytest.raises(TypeError, match="got int"):
        compperf.as_device(0)


def test_synchronize_cpu_is_a_no_op(calls, fake_mps):
    compperf.synchronize("cpu")
    assert calls == []


def test_synchronize_waits_on_the_named_device(fake_cuda):
    compperf.synchronize("cuda:1")
    compperf.synchronize()
    assert fake_cuda == ["sync cuda:1", "sync cuda:0"]


def test_synchronize_mps(fake_mps):
    compperf.synchronize("mps")
    assert fake_mps == ["sync mps"]


def test_synchronize_refuses_unknown_devices():
    with pytest.raises(ValueError, match="not available here"):
        compperf.synchronize("cuda:0")
