"""NNEF plans in the tract dialect (docs/plan-format.md): write and read them.

    write_dir(model, path); write_tar(model, path); write_tar_gz(model, path)
    blob = to_tar_bytes(model)          # the plan in memory
    model = load(path_or_bytes)         # directory, .tar, .tgz or bytes -> TypedModel
"""
import os

from . import archive
from .reader import read_files
from .writer import plan_files


def write_dir(model, path):
    archive.write_dir(plan_files(model), path)


def write_tar(model, path):
    archive.write_tar(plan_files(model), path)


def write_tar_gz(model, path):
    archive.write_tar_gz(plan_files(model), path)


def to_tar_bytes(model):
    return archive.to_tar_bytes(plan_files(model))


def load(source):
    """A TypedModel (decluttered) from a plan directory, .tar, .tgz or bytes."""
    where = "<bytes>" if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    return read_files(archive.read(source), where)


__all__ = ["write_dir", "write_tar", "write_tar_gz", "to_tar_bytes", "load", "plan_files"]
