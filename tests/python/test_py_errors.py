#!/usr/bin/python3
"""The library's errors as Python's own exceptions: each is a dplace.Error and, where one fits, the built-in
exception a Python library raises for the same fault (docs/python.md, "Errors").

usage: test_py_errors.py [TEST]   (tests/python/pyt.py: the runner's rules)"""
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyt  # noqa: E402
from pyt import check, check_eq, raises  # noqa: E402

dplace = pyt.import_dplace()

TINY = os.path.join(pyt.ROOT, "tests", "data", "tiny.json")


def test_classes_are_python_exceptions():
    for cls, builtin in ((dplace.FileError, OSError), (dplace.MissingFileError, FileNotFoundError),
                         (dplace.InputError, ValueError), (dplace.OutOfMemoryError, MemoryError)):
        check(issubclass(cls, dplace.Error), f"{cls.__name__} is a dplace.Error")
        check(issubclass(cls, builtin), f"{cls.__name__} is a {builtin.__name__}")
        check_eq(cls.__module__, "dplace", f"{cls.__name__}.__module__")
    check(issubclass(dplace.MissingFileError, dplace.FileError), "MissingFileError is a dplace.FileError")


def test_missing_graph_file_is_file_not_found():
    path = os.path.join(pyt.tmpdir(), "missing.json")
    e = raises(FileNotFoundError, dplace.Graph.from_file, path, match="missing.json")
    check(isinstance(e, dplace.Error), "a dplace.Error too")
    check(isinstance(e, dplace.MissingFileError), "a dplace.MissingFileError")
    check_eq(e.status, "io", "status")
    check_eq(e.errno, errno.ENOENT, "errno")


def test_missing_devices_file_is_file_not_found():
    e = raises(FileNotFoundError, dplace.Devices.from_file, os.path.join(pyt.tmpdir(), "d.json"), match="d.json")
    check(isinstance(e, dplace.Error), "a dplace.Error too")


def test_missing_file_message_is_the_library_line():
    path = os.path.join(pyt.tmpdir(), "missing.json")
    e = raises(dplace.Error, dplace.Graph.from_file, path)
    check_eq(str(e), f"{path}: cannot open: {os.strerror(errno.ENOENT)}", "str(e)")


def test_missing_checkpoint_is_file_not_found():
    g, d = dplace.Graph.from_zoo("synthetic-600"), dplace.Devices.preset("k40x2")
    e = raises(FileNotFoundError, dplace.optimize, g, d, "search", updates=2, resume="/nonexistent/x.ck",
               match="x.ck")
    check(isinstance(e, dplace.Error), "a dplace.Error too")


def test_output_into_missing_folder_is_file_not_found():
    g, d = dplace.Graph.from_file(TINY), dplace.Devices.preset("k40x2")
    path = os.path.join(pyt.tmpdir(), "no", "such", "p.json")
    e = raises(FileNotFoundError, dplace.write_placement, path, g, d, [0] * len(g), match="p.json")
    check(isinstance(e, dplace.FileError), "a dplace.FileError")


def test_output_onto_a_folder_is_os_error():
    g, d = dplace.Graph.from_file(TINY), dplace.Devices.preset("k40x2")
    e = raises(OSError, dplace.write_placement, pyt.tmpdir(), g, d, [0] * len(g))
    check(isinstance(e, dplace.FileError), "a dplace.FileError")
    check(not isinstance(e, FileNotFoundError), f"not a FileNotFoundError: {e}")


def test_malformed_file_is_value_error():
    path = os.path.join(pyt.tmpdir(), "bad.json")
    with open(path, "w") as f:
        f.write('{"format": "dplace-graph", "version": 1, "ops": [')
    e = raises(ValueError, dplace.Graph.from_file, path, match="bad.json")
    check(isinstance(e, dplace.InputError), "a dplace.InputError")
    check_eq(e.status, "parse", "status")


def test_inconsistent_input_is_value_error():
    e = raises(ValueError, dplace.Graph.from_json,
               '{"format": "dplace-graph", "version": 1, "ops": [{"name": "a", "inputs": [5]}]}')
    check(isinstance(e, dplace.Error), "a dplace.Error too")
    check(e.status in ("parse", "invalid"), f"status {e.status}")


def test_unknown_name_is_value_error():
    e = raises(ValueError, dplace.Graph.from_zoo, "no-such-model", match="no-such-model")
    check(isinstance(e, dplace.Error), "a dplace.Error too")
    check_eq(e.status, "invalid", "status")


if __name__ == "__main__":
    pyt.main(globals())
