"""Cook tests: make `ember.cook` importable from the source tree when ember is not installed.

Run alone with `pytest --confcutdir=tests/cook tests/cook` (skips the top-level conftest,
which builds the C library): these tests need only numpy, onnx, onnxruntime and tract.
"""
import importlib.util
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))      # zoo.py
sys.path.insert(0, HERE)                             # cook_testing.py


def _shim_ember_cook():
    try:
        import ember.cook  # noqa: F401
        return
    except ImportError:
        pass
    if "ember" not in sys.modules:
        package = types.ModuleType("ember")
        package.__path__ = []
        sys.modules["ember"] = package
    cook_dir = os.path.join(ROOT, "cook")
    spec = importlib.util.spec_from_file_location(
        "ember.cook", os.path.join(cook_dir, "__init__.py"),
        submodule_search_locations=[cook_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules["ember.cook"] = module
    spec.loader.exec_module(module)
    sys.modules["ember"].cook = module


_shim_ember_cook()
