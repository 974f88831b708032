"""Where a client finds the master, its token and the cluster's CA: the CLI's rules, exactly.

First match wins:

address
    the ``addr`` argument, ``$PACELINE_ADDR``, ``addr:`` in ``~/.paceline/config``, the
    ``"grpc"`` entry of ``./data/master.json`` (written by a local ``paceline up``),
    ``127.0.0.1:5390``. Each of the first three may list several masters separated by commas
    (``"m1:5390,m2:5390"``), tried in turn; an empty entry is an error.
token
    the ``token`` argument, ``$PACELINE_TOKEN``, the file ``$PACELINE_TASK_TOKEN_FILE`` (inside a
    task with an identity: its credential, read again whenever the agent replaces it),
    ``token:`` in ``~/.paceline/config``, ``./data/token`` (surrounding whitespace removed).
    None: calls go without one.
CA
    the ``ca`` argument (a file), ``$PACELINE_CA``, ``ca:`` in ``~/.paceline/config``,
    ``./data/tls/ca.pem``: the CA the master's certificate is verified against (TLS). None
    found: plain text (a master started with ``paceline up --insecure-loopback``).

An empty environment variable counts as unset. ``~/.paceline/config`` is YAML with the optional
keys ``addr``, ``token`` and ``ca``; another key is an error (it is a typo). ``./data`` is
relative to the current directory, as for the CLI.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional, Union

import grpc
import yaml

from .errors import InvalidArgumentError

__all__ = ["Settings", "TaskIdentity", "resolve", "task_settings", "task_identity", "read_ca",
           "read_token_file", "split_addrs", "DEFAULT_ADDR", "DATA_DIR"]

DEFAULT_ADDR = "127.0.0.1:5390"
DATA_DIR = "data"  # what a local `paceline up` writes: master.json, token, tls/ca.pem
CONFIG = "~/.paceline/config"
_KEYS = ("addr", "token", "ca")


@dataclass(frozen=True)
class Settings:
    """How to reach the master: what :func:`resolve` found, and where it found it."""

    addrs: tuple[str, ...]  # the masters, in the order given; never empty
    token: str = field(default="", repr=False)
    ca_pem: Optional[bytes] = field(default=None, repr=False)  # None: plain text
    addr_source: str = "the default address"
    ca_source: str = ""  # "" when there is no CA
    # A task's credential file ($PACELINE_TASK_TOKEN_FILE): the token is read from it again
    # whenever the file changes (the agent renews it). "" when the token is given as is.
    token_file: str = ""

    @property
    def addr(self) -> str:
        """The first master."""
        return self.addrs[0]


def _config_error(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, message)


def _read_config(home: str) -> dict[str, str]:
    """The keys of ~/.paceline/config (none when HOME is unset or the file is missing)."""
    if not home:
        return {}
    path = os.path.join(home, ".paceline", "config")
    if not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            root = yaml.compose(f)
    except (OSError, UnicodeDecodeError) as e:
        raise _config_error(f"{path}: {e}") from None
    except yaml.YAMLError as e:
        raise _config_error(f"{path}: {e}".replace("\n", " ")) from None
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag.endswith(":null")):
        return {}
    if not isinstance(root, yaml.MappingNode):
        raise _config_error(f"{path}: expected a map with addr, token, ca")
    out: dict[str, str] = {}
    for key_node, value_node in root.value:
        key = str(key_node.value)
        line = key_node.start_mark.line + 1
        if key not in _KEYS:
            raise _config_error(f"{path}:{line}: unknown key '{key}'; expected addr, token or ca")
        if not isinstance(value_node, yaml.ScalarNode):
            raise _config_error(f"{path}:{line}: '{key}' must be a string")
        out[key] = value_node.value  # the text as written, as the CLI reads it
    return out


def _endpoints_grpc(cwd: Path) -> Optional[str]:
    """The "grpc" address of ./data/master.json, when it is a master endpoints file."""
    try:
        doc = json.loads((cwd / DATA_DIR / "master.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    grpc_addr = doc.get("grpc") if isinstance(doc, dict) else None
    return grpc_addr if isinstance(grpc_addr, str) else None


def split_addrs(text: str, source: str) -> tuple[str, ...]:
    """"a:1, b:2" -> ("a:1", "b:2"); an empty entry is an error naming `source`."""
    parts = tuple(p.strip() for p in text.split(","))
    if any(not p for p in parts):
        raise _config_error(
            f"{source}: '{text}' has an empty address; expected HOST:PORT[,HOST:PORT...]")
    return parts


def read_ca(path: str, source: str) -> bytes:
    """The PEM text of the CA file `path`; an error naming `source` unless it is a readable
    PEM certificate."""
    try:
        pem = Path(path).read_bytes()
    except OSError:
        pem = b""
    if b"BEGIN CERTIFICATE" not in pem:
        raise _config_error(f"{source}: {path} is not a readable PEM certificate")
    return pem


def read_token_file(path: str, source: str) -> str:
    """The token in the file `path` (surrounding whitespace removed); an error naming `source`
    when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise _config_error(f"{source}: cannot read {path}: {e}") from None


@dataclass(frozen=True)
class TaskIdentity:
    """The run a task's credential belongs to, from the variables the agent sets."""

    job_id: int
    instance: int
    run: int


def task_identity(environ: Optional[Mapping[str, str]] = None) -> TaskIdentity:
    """This task's job, instance and run ($PACELINE_JOB_ID, $PACELINE_INSTANCE_ID, and the
    last part of $PACELINE_RUN_ID, "JOB/INSTANCE/RUN"); raises
    :class:`~paceline.InvalidArgumentError` outside a task."""
    env = os.environ if environ is None else environ
    values = []
    for name in ("PACELINE_JOB_ID", "PACELINE_INSTANCE_ID", "PACELINE_RUN_ID"):
        text = env.get(name, "")
        number = text.rpartition("/")[2] if name == "PACELINE_RUN_ID" else text
        if not number.isdigit():
            raise _config_error(f"${name} is {text!r}; expected "
                                f"{'JOB/INSTANCE/RUN' if name == 'PACELINE_RUN_ID' else 'a number'}"
                                " (set inside a task)")
        values.append(int(number))
    return TaskIdentity(*values)


def task_settings(environ: Optional[Mapping[str, str]] = None) -> Settings:
    """What a task with an identity (``task.identity: true``, or a controller) finds in its
    environment: the masters ($PACELINE_ADDR), its credential ($PACELINE_TASK_TOKEN_FILE) and
    the cluster's CA ($PACELINE_CA, with TLS). Raises :class:`~paceline.InvalidArgumentError`
    when the task has no identity."""
    env = os.environ if environ is None else environ
    token_file = env.get("PACELINE_TASK_TOKEN_FILE", "")
    if not token_file:
        raise _config_error(
            "$PACELINE_TASK_TOKEN_FILE is not set: not inside a task with an identity "
            "(give the task identity: true, or make it a controller)")
    addr_text = env.get("PACELINE_ADDR", "")
    if not addr_text:
        raise _config_error("$PACELINE_ADDR is not set: the agent sets it beside the credential")
    ca_path = env.get("PACELINE_CA", "")
    return Settings(addrs=split_addrs(addr_text, "$PACELINE_ADDR"),
                    token=read_token_file(token_file, "$PACELINE_TASK_TOKEN_FILE"),
                    ca_pem=read_ca(ca_path, "$PACELINE_CA") if ca_path else None,
                    addr_source="$PACELINE_ADDR", ca_source="$PACELINE_CA" if ca_path else "",
                    token_file=token_file)


def resolve(addr: Optional[str] = None, token: Optional[str] = None, ca: Optional[str] = None,
            *, environ: Optional[Mapping[str, str]] = None,
            cwd: Optional[Union[str, "os.PathLike[str]"]] = None) -> Settings:
    """Finds the master's address(es), the token and the CA by the rules of this module.

    `addr`, `token` and `ca` (a CA file) come first, as the CLI's --addr, --token and --ca.
    `environ` (default ``os.environ``) supplies the variables and HOME; `cwd` (default the
    current directory) is where ``./data`` is looked for (other relative paths are relative to
    the current directory). A malformed ``~/.paceline/config``,
    an empty address in a list, or a CA file that is not a PEM certificate raise
    :class:`~paceline.InvalidArgumentError`.
    """
    env = os.environ if environ is None else environ
    here = Path(cwd) if cwd is not None else Path(".")
    config = _read_config(env.get("HOME", ""))

    if addr:
        addr_text, addr_source = addr, "the addr argument"
    elif env.get("PACELINE_ADDR"):
        addr_text, addr_source = env["PACELINE_ADDR"], "$PACELINE_ADDR"
    elif config.get("addr"):
        addr_text, addr_source = config["addr"], CONFIG
    elif (local := _endpoints_grpc(here)) is not None:
        addr_text, addr_source = local, "./data/master.json"
    else:
        addr_text, addr_source = DEFAULT_ADDR, "the default address"
    addrs = split_addrs(addr_text, addr_source)

    token_file = ""
    if token:
        found_token = token
    elif env.get("PACELINE_TOKEN"):
        found_token = env["PACELINE_TOKEN"]
    elif env.get("PACELINE_TASK_TOKEN_FILE"):
        token_file = env["PACELINE_TASK_TOKEN_FILE"]
        found_token = read_token_file(token_file, "$PACELINE_TASK_TOKEN_FILE")
    elif config.get("token"):
        found_token = config["token"]
    else:
        try:
            found_token = (here / DATA_DIR / "token").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            found_token = ""

    ca_path, ca_source = "", ""
    if ca:
        ca_path, ca_source = ca, "the ca argument"
    elif env.get("PACELINE_CA"):
        ca_path, ca_source = env["PACELINE_CA"], "$PACELINE_CA"
    elif config.get("ca"):
        ca_path, ca_source = config["ca"], CONFIG
    elif (local_ca := here / DATA_DIR / "tls" / "ca.pem").exists():
        ca_path, ca_source = str(local_ca), "./data/tls/ca.pem"
    ca_pem = read_ca(ca_path, ca_source) if ca_path else None
    return Settings(addrs=addrs, token=found_token, ca_pem=ca_pem, addr_source=addr_source,
                    ca_source=ca_source, token_file=token_file)
