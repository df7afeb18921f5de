"""The ONE error table (C++ ErrorCode -> Python exception) and errors raised by real calls."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import opgraph

NOT_SUPPORTED = {"GRAPH_NOT_SUPPORTED", "GRAPH_EXECUTION_PLAN_CREATION_FAILED", "HEURISTIC_QUERY_FAILED",
                 "UNSUPPORTED_GRAPH_FORMAT"}
VALUE = {"ATTRIBUTE_NOT_SET", "SHAPE_DEDUCTION_FAILED", "INVALID_TENSOR_NAME", "INVALID_VARIANT_PACK",
         "INVALID_VALUE"}


@pytest.mark.parametrize("code", opgraph._C._error_code_names)
def test_table_maps_every_code_with_message_unchanged(code):
    if code in NOT_SUPPORTED:
        expected = opgraph.GraphNotSupportedError
    elif code in VALUE:
        expected = ValueError
    elif code == "GRAPH_FROZEN":
        expected = opgraph.FrozenGraphError
    else:
        expected = RuntimeError
    msg = f"node 'n3' port 'B': rule {code.lower()}"
    with pytest.raises(expected) as e:
        opgraph._C._raise_for_code(code, msg)
    assert str(e.value) == msg
    if expected is RuntimeError:  # not one of the specific classes
        assert not isinstance(e.value, (opgraph.GraphNotSupportedError, opgraph.FrozenGraphError))


def test_exception_classes():
    assert opgraph.cudnnGraphNotSupportedError is opgraph.GraphNotSupportedError
    assert issubclass(opgraph.GraphNotSupportedError, RuntimeError)
    assert issubclass(opgraph.FrozenGraphError, RuntimeError)
    assert len(opgraph._C._error_code_names) == 18


def test_invalid_graph_is_not_supported_and_names_the_port():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    a = g.tensor(dim=[3, 4], data_type=np.float32, name="a")
    b = g.tensor(dim=[5, 2], data_type=np.float32, name="b")
    g.matmul(A=a, B=b, name="mm")
    with pytest.raises(opgraph.GraphNotSupportedError) as e:
        g.validate()
    assert "mm" in str(e.value) and "B" in str(e.value) and "K" in str(e.value)


def test_invalid_graph_error_in_a_fresh_process_with_torch_imported_after_opgraph():
    # Regression for the H200 SIGSEGV (validate_probe.py says why): opgraph, then torch when it is
    # installed, then the first C++ error paths of the process. Must exit cleanly with the message.
    probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_probe.py")
    r = subprocess.run([sys.executable, "-X", "faulthandler", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "inner extent K must match" in r.stdout and "probe ok" in r.stdout, r.stdout


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_module_keeps_its_static_libraries_symbols_private():
    # The crash's fix: the static C++ libraries (and a libstdc++ copy a toolchain may link in) are
    # not exported, so nothing in the process interposes them and the module binds its own calls.
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", opgraph._C.__file__], capture_output=True,
                         text=True, check=True).stdout
    symbols = [line.split(maxsplit=2)[2] for line in out.splitlines() if len(line.split(maxsplit=2)) == 3]
    leaked = [s for s in symbols  # functions and data of the core libraries or of a libstdc++ copy
              if s.startswith(("opgraph::", "nlohmann::", "std::locale", "std::ios_base", "std::codecvt"))
              or "std::basic_ostream<char, std::char_traits<char> >::_M_insert" in s]
    assert not leaked, leaked[:10]
    assert len(out.splitlines()) < 400, len(out.splitlines())


def test_missing_attribute_is_value_error():
    g = opgraph.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    x = g.tensor(dim=[3, 4], data_type=np.float32)
    g.transpose(input=x)  # permutation is required
    with pytest.raises(ValueError, match="permutation"):
        g.validate()


def test_bad_json_is_not_supported():
    with pytest.raises(opgraph.GraphNotSupportedError):
        opgraph.deserialize(b'{"nodes": 3}')


def test_duplicate_user_uid_is_value_error():
    g = opgraph.pygraph(io_data_type=np.float32)
    a = g.tensor(dim=[2], data_type=np.float32, uid=5)
    b = g.tensor(dim=[2], data_type=np.float32, uid=5)
    g.add(a=a, b=b).set_output(True)
    with pytest.raises((ValueError, opgraph.GraphNotSupportedError), match="5"):
        g.validate()
