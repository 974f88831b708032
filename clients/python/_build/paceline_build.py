"""The PEP 517 build backend of the Paceline Python client, standard library only.

pip runs it in place (pyproject.toml: ``backend-path = ["_build"]``, ``requires = []``), so a
machine without access to PyPI builds and installs the package. A wheel holds the hand-written
``paceline`` package and ``paceline.v1``, the protobuf and gRPC modules generated here from the
repository's ``proto/`` with ``protoc`` and the gRPC Python plugin (``grpc_python_plugin``), with
their type stubs. Nothing generated is written into the source tree.

Where things come from:
  protos     ``proto/`` in this directory (an sdist carries them), else ``../../proto``
  version    ``PKG-INFO`` (an sdist), else ``project(paceline VERSION x.y.z)`` of ``../../CMakeLists.txt``
  protoc     ``$PACELINE_PROTOC``, else ``protoc`` on the PATH
  plugin     ``$PACELINE_GRPC_PYTHON_PLUGIN``, else ``grpc_python_plugin`` on the PATH
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any, Iterator, Optional

HERE = Path(__file__).resolve().parent.parent  # clients/python (or an unpacked sdist)
TAG = "py3-none-any"
# Fixed file times make the same sources give the same wheel.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(RuntimeError):
    """The package cannot be built here; the message says what is missing."""


def _project() -> dict[str, Any]:
    with open(HERE / "pyproject.toml", "rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    return project


def _version() -> str:
    pkg_info = HERE / "PKG-INFO"  # an unpacked sdist
    if pkg_info.is_file():
        m = re.search(r"^Version: (\S+)$", pkg_info.read_text(), re.MULTILINE)
        if m:
            return m.group(1)
    cmake = HERE.parent.parent / "CMakeLists.txt"
    if cmake.is_file():
        m = re.search(r"project\(\s*paceline\s+VERSION\s+([0-9][0-9.]*)", cmake.read_text())
        if m:
            return m.group(1)
    raise BuildError(f"no version: neither {pkg_info} nor {cmake} (project VERSION) is readable")


def _proto_root() -> Path:
    for root in (HERE / "proto", HERE.parent.parent / "proto"):
        if (root / "paceline" / "v1").is_dir():
            return root
    raise BuildError(f"no protos: expected paceline/v1/*.proto under {HERE / 'proto'} "
                     f"or {HERE.parent.parent / 'proto'}")


def _tool(env: str, name: str, package: str) -> str:
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        raise BuildError(f"{name} not found (set ${env} or install Debian's {package}: "
                         f"scripts/install-deps.sh)")
    return path


def _metadata(version: str) -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {version}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
    ]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    readme = HERE / str(p["readme"])
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme.read_text()


def _wheel_file() -> str:
    return ("Wheel-Version: 1.0\nGenerator: paceline_build\nRoot-Is-Purelib: true\n"
            f"Tag: {TAG}\n")


def _dist_info(version: str) -> str:
    return f"{_project()['name']}-{version}.dist-info"


def _generate(out: Path) -> None:
    """Writes paceline/v1/*_pb2.py, *_pb2.pyi and *_pb2_grpc.py under `out`."""
    root = _proto_root()
    protos = sorted(str(p.relative_to(root)) for p in (root / "paceline" / "v1").glob("*.proto"))
    protoc = _tool("PACELINE_PROTOC", "protoc", "protobuf-compiler")
    plugin = _tool("PACELINE_GRPC_PYTHON_PLUGIN", "grpc_python_plugin", "protobuf-compiler-grpc")
    cmd = [protoc, f"-I{root}", f"--python_out={out}", f"--pyi_out={out}",
           f"--plugin=protoc-gen-grpc_python={plugin}", f"--grpc_python_out={out}", *protos]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    (out / "paceline" / "v1" / "__init__.py").write_text(
        '"""Generated from proto/paceline/v1 when the package was built."""\n')


def _package_files(version: str) -> Iterator[tuple[str, bytes]]:
    """(path in the wheel, content) of every file the package installs."""
    src = HERE / "paceline"
    for path in sorted(src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            yield f"paceline/{path.relative_to(src).as_posix()}", path.read_bytes()
    yield "paceline/_version.py", f'"""The package\'s version."""\n\n__version__ = "{version}"\n'.encode()
    with tempfile.TemporaryDirectory() as tmp:
        _generate(Path(tmp))
        gen = Path(tmp) / "paceline" / "v1"
        for path in sorted(gen.iterdir()):
            yield f"paceline/v1/{path.name}", path.read_bytes()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _zip_write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


# The hooks pip calls (PEP 517).

def get_requires_for_build_wheel(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    """Nothing to install before building: the backend needs only the standard library."""
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict[str, Any]] = None) -> list[str]:
    """Nothing to install before building an sdist."""
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict[str, Any]] = None) -> str:
    """Writes the wheel's .dist-info (METADATA and WHEEL) without generating any code."""
    version = _version()
    dist_info = Path(metadata_directory) / _dist_info(version)
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(version))
    (dist_info / "WHEEL").write_text(_wheel_file())
    return dist_info.name


def build_wheel(wheel_directory: str, config_settings: Optional[dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    """Generates the gRPC code and writes paceline-VERSION-py3-none-any.whl."""
    version = _version()
    name = f"{_project()['name']}-{version}-{TAG}.whl"
    dist_info = _dist_info(version)
    files = list(_package_files(version))
    files.append((f"{dist_info}/METADATA", _metadata(version).encode()))
    files.append((f"{dist_info}/WHEEL", _wheel_file().encode()))
    record = [_record_line(n, d) for n, d in files] + [f"{dist_info}/RECORD,,"]
    Path(wheel_directory).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as zf:
        for n, d in files:
            _zip_write(zf, n, d)
        _zip_write(zf, f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode())
    return name


def build_sdist(sdist_directory: str, config_settings: Optional[dict[str, Any]] = None) -> str:
    """Writes paceline-VERSION.tar.gz: the sources, this backend and the protos."""
    version = _version()
    base = f"{_project()['name']}-{version}"
    members: list[tuple[str, bytes]] = [("PKG-INFO", _metadata(version).encode())]
    for rel in ("pyproject.toml", _project()["readme"]):
        members.append((rel, (HERE / rel).read_bytes()))
    for folder in ("_build", "paceline"):
        for path in sorted((HERE / folder).rglob("*.py")) + sorted((HERE / folder).rglob("*.typed")):
            if "__pycache__" not in path.parts:
                members.append((path.relative_to(HERE).as_posix(), path.read_bytes()))
    root = _proto_root()
    for path in sorted((root / "paceline" / "v1").glob("*.proto")):
        members.append((f"proto/{path.relative_to(root).as_posix()}", path.read_bytes()))
    name = f"{base}.tar.gz"
    Path(sdist_directory).mkdir(parents=True, exist_ok=True)
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel, data in members:
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return name
