"""Only regular files are opened: a FIFO, a device or a directory is refused before any read."""

import os

import pytest

from tui.regular_file import NotARegularFile, NotUtf8, open_regular, read_utf8


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        open_regular(tmp_path / "pipe")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_and_a_link_to_it_are_refused(tmp_path, device):
    (tmp_path / "link").symlink_to(device)
    for path in (device, tmp_path / "link"):
        with pytest.raises(NotARegularFile, match="is a character device"):
            open_regular(path)


def test_a_directory_is_refused_as_open_would(tmp_path):
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)


def test_a_regular_file_reads_as_usual_and_blocking(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    with open_regular(tmp_path / "f") as handle:
        assert os.get_blocking(handle.fileno()) and handle.read() == b"abc"


def test_text_that_is_not_utf8_says_where(tmp_path):
    (tmp_path / "t.toml").write_bytes(b"a = 1\nb = '\xff'\n")
    with pytest.raises(NotUtf8, match=r"byte 0xff at offset 11 \(line 2\)"):
        read_utf8(tmp_path / "t.toml")
