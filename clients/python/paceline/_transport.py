"""How the client talks to the master: channels, the token, retries and failover (as the CLI).

One attempt connects to the current master (at most CONNECT_TIMEOUT), then sends the call.
What is retried:

- a connection that never came up (refused, no answer, TLS handshake refused): nothing was
  sent, so reads and writes go to the next configured master at once, and once every master
  failed, after a back-off (0.2 s doubling to 2 s, with jitter);
- a refusal by a master that does not lead, naming the leader (``paceline-leader`` trailer or
  ``leader: HOST:PORT`` in the message): it did nothing, so the call goes to the leader at
  once if the leader is one of the configured masters (the token goes only where the user sent
  it); a client given one master fails at once with the refusal;
- UNAVAILABLE or DEADLINE_EXCEEDED once the call was sent: a read is retried; a write is not,
  since the master may have carried it out.

Everything else is the master's answer, raised as a :class:`~paceline.PacelineError`. A call
gives up `timeout` seconds after it began, retries included. Each retry is logged (logger
``paceline``, level WARNING).
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from typing import Any, Callable, Optional

import grpc

from .discovery import Settings
from .errors import PacelineError, UnavailableError, error_for, from_rpc_error, trailer

try:
    from .v1 import (access_pb2_grpc, cluster_pb2, cluster_pb2_grpc, host_pb2_grpc, job_pb2_grpc,
                     pool_pb2_grpc, secret_pb2_grpc)
except ImportError as e:  # running from the source tree: nothing generated there
    raise ImportError(
        "paceline.v1 (the generated gRPC code) is missing: install the package "
        "(pip install ./clients/python), which generates it from proto/") from e

log = logging.getLogger("paceline")

CONNECT_TIMEOUT = 3.0  # seconds one attempt waits for its connection
LAST_ATTEMPT = 0.2  # the last attempt comes this long before the limit rather than not at all

_STUBS: dict[str, Callable[[grpc.Channel], Any]] = {
    "AccessService": access_pb2_grpc.AccessServiceStub,
    "ClusterService": cluster_pb2_grpc.ClusterServiceStub,
    "HostService": host_pb2_grpc.HostServiceStub,
    "JobService": job_pb2_grpc.JobServiceStub,
    "TaskService": job_pb2_grpc.TaskServiceStub,
    "PoolService": pool_pb2_grpc.PoolServiceStub,
    "SecretService": secret_pb2_grpc.SecretServiceStub,
}

TOKEN_HINT = ("the master at {addr} wants its token: the token argument, $PACELINE_TOKEN, "
              "token: in ~/.paceline/config, or ./data/token")


def _is_host_port(addr: str) -> bool:
    host, colon, port = addr.rpartition(":")
    return bool(colon and host and port.isdigit())


def leader_of(error: grpc.RpcError) -> Optional[str]:
    """The leader a refusal redirects to (UNAVAILABLE or FAILED_PRECONDITION only), if named."""
    if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION):
        return None
    named = (trailer(error, "paceline-leader") or "").strip()
    if _is_host_port(named):
        return named
    message = error.details() or ""
    at = message.rfind("leader: ")
    if at < 0:
        return None
    rest = message[at + len("leader: "):]
    for i, c in enumerate(rest):
        if c in " ;,)":
            rest = rest[:i]
            break
    return rest if _is_host_port(rest) else None


class _Outage:
    """The failed attempts of one call: which master is next, and how long to wait for it."""

    def __init__(self, transport: "Transport", limit: float) -> None:
        self.transport = transport
        self.limit = limit
        self.began = time.monotonic()
        self.attempts = 0
        self.tried_in_round = 0
        self.backoff = 0.2

    def next(self, addr: str, reason: str, leader: Optional[str],
             answered: Optional[grpc.StatusCode] = None) -> None:
        """Moves to the next master and sleeps if needed; raises when the time is up.

        `answered`: the code of a call the master received (None: it was not reached).
        """
        t = self.transport
        self.attempts += 1
        addrs = t.settings.addrs
        if leader is not None and leader in addrs:
            t.current = addrs.index(leader)
            delay = 0.0
        else:
            t.current = (t.current + 1) % len(addrs)
            self.tried_in_round += 1
            delay = 0.0
            if self.tried_in_round >= len(addrs):
                self.tried_in_round = 0
                delay = self.backoff * random.uniform(0.8, 1.2)
                self.backoff = min(self.backoff * 2, 2.0)
        now = time.monotonic()
        delay = min(delay, self.limit - now - LAST_ATTEMPT)
        if delay < 0:
            raise self.give_up(addr, reason, now, answered)
        log.warning("master %s unavailable (%s); retrying %s at %s (attempt %d)",
                    addr, reason, f"in {delay:.1f}s" if delay else "now", addrs[t.current],
                    self.attempts + 1)
        time.sleep(delay)

    def give_up(self, addr: str, reason: str, now: float,
                answered: Optional[grpc.StatusCode]) -> PacelineError:
        """The error of a call whose time ran out; the last attempt failed at `addr`."""
        s = self.transport.settings
        plural = "" if self.attempts == 1 else "s"
        after = f"gave up after {self.attempts} attempt{plural} in {now - self.began:.1f}s"
        if answered == grpc.StatusCode.DEADLINE_EXCEEDED:
            return error_for(answered, f"the master at {addr} did not answer in time; {after}")
        if answered is not None:
            return error_for(answered, f"the master at {addr} is unavailable: {reason}; {after}")
        where = (f"the master at {addr}" if len(s.addrs) == 1
                 else f"any of the masters at {','.join(s.addrs)}; the last tried: {addr}")
        hint = ("is it running? Start one with `make up` or `paceline up`. " + (
            f"The master's certificate is checked against the CA of {s.ca_source}: "
            "is it this cluster's?" if s.ca_pem else
            "If it serves TLS (the default), give the cluster's CA: the ca argument, "
            "$PACELINE_CA, ca: in ~/.paceline/config, or ./data/tls/ca.pem"))
        return UnavailableError(
            grpc.StatusCode.UNAVAILABLE,
            f"cannot reach {where} (from {s.addr_source}): {reason}; {after}", hint=hint)


class Transport:
    """The connection of one Client: the masters, the token, a channel to the current master."""

    def __init__(self, settings: Settings, timeout: float) -> None:
        self.settings = settings
        self.timeout = timeout
        self.current = 0  # index of the master talked to now
        self._channels: dict[str, grpc.Channel] = {}
        self._proven: set[str] = set()  # masters whose channel answered since it was made
        self._lock = threading.Lock()
        self._token = settings.token
        self._token_stamp = self._stamp()

    def _stamp(self) -> Optional[tuple[int, int, int]]:
        """The token file's identity and change time (None without a file, or unreadable)."""
        if not self.settings.token_file:
            return None
        try:
            st = os.stat(self.settings.token_file)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call's metadata: the token, read again from its file when the file changed (a
        task's credential, which the agent renews by replacing the file)."""
        if self.settings.token_file:
            stamp = self._stamp()
            if stamp is not None and stamp != self._token_stamp:
                try:
                    with open(self.settings.token_file, encoding="utf-8") as f:
                        token = f.read().strip()
                except OSError:
                    token = ""
                if token:
                    with self._lock:
                        self._token, self._token_stamp = token, stamp
        token = self._token
        return (("authorization", f"Bearer {token}"),) if token else ()

    @property
    def address(self) -> str:
        """The master talked to now."""
        return self.settings.addrs[self.current]

    def close(self) -> None:
        """Closes every channel."""
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for ch in channels:
            ch.close()

    def _channel(self, addr: str) -> grpc.Channel:
        with self._lock:
            ch = self._channels.get(addr)
            if ch is None:
                # A channel of its own: a fresh connection after a failure, not one in gRPC's
                # shared pool's (much longer) reconnect back-off.
                options = [("grpc.max_receive_message_length", 256 << 20),
                           ("grpc.use_local_subchannel_pool", 1)]
                if self.settings.ca_pem:
                    creds = grpc.ssl_channel_credentials(root_certificates=self.settings.ca_pem)
                    ch = grpc.secure_channel(addr, creds, options)
                else:
                    ch = grpc.insecure_channel(addr, options)
                self._channels[addr] = ch
            return ch

    def _drop(self, addr: str) -> None:
        with self._lock:
            self._proven.discard(addr)
            ch = self._channels.pop(addr, None)
        if ch is not None:
            ch.close()

    def _ready(self, addr: str, until: float, write: bool) -> Optional[str]:
        """Connects to `addr` by `until`: None when connected, else why not (nothing was sent).

        The probe is a call that fails at once rather than wait once the connection failed
        (cluster info, which needs no token), so its error is gRPC's connection error. A read
        on a channel that answered before goes without it (a read may be retried anyway).
        """
        if not write and addr in self._proven:
            return None
        ch = self._channel(addr)
        try:
            cluster_pb2_grpc.ClusterServiceStub(ch).GetInfo(
                cluster_pb2.GetInfoRequest(), timeout=max(0.01, until - time.monotonic()),
                wait_for_ready=False)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.UNAVAILABLE:
                reason = e.details() or "unavailable"
            elif e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                reason = "no answer"
            else:
                reason = None  # it answered
            if reason is not None:
                self._drop(addr)
                return reason
        with self._lock:
            self._proven.add(addr)
        return None

    def stub(self, service: str, addr: str) -> Any:
        """The generated stub of `service` (e.g. "JobService") on the channel to `addr`."""
        try:
            return _STUBS[service](self._channel(addr))
        except KeyError:
            raise ValueError(f"unknown service {service!r}; expected one of "
                             f"{', '.join(sorted(_STUBS))}") from None

    def _explain(self, error: grpc.RpcError, addr: str) -> PacelineError:
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            return from_rpc_error(error, hint=TOKEN_HINT.format(addr=addr))
        return from_rpc_error(error)

    def call(self, service: str, method: str, request: Any, *, write: bool,
             timeout: Optional[float] = None) -> Any:
        """One unary call, retried by the rules of this module; the response, or raises."""
        limit = time.monotonic() + (self.timeout if timeout is None else timeout)
        outage = _Outage(self, limit)
        while True:
            addr = self.address
            reason = self._ready(addr, min(limit, time.monotonic() + CONNECT_TIMEOUT), write)
            leader, answered = None, None
            if reason is None:
                try:
                    return getattr(self.stub(service, addr), method)(
                        request, timeout=max(0.01, limit - time.monotonic()),
                        metadata=self.metadata)
                except grpc.RpcError as e:
                    leader = self._after_failure(e, addr, write)
                    reason, answered = e.details() or e.code().name, e.code()
            outage.next(addr, reason, leader, answered)

    def _after_failure(self, e: grpc.RpcError, addr: str, write: bool) -> Optional[str]:
        """For a call the master may have received: the leader to go to, or None to retry
        elsewhere; raises when the call is not to be retried."""
        leader = leader_of(e)
        if leader is not None:
            if leader not in self.settings.addrs and len(self.settings.addrs) == 1:
                raise error_for(
                    e.code(), f"the master at {addr} does not lead ({e.details()})",
                    hint=f"the client sends calls only to the masters it was given (from "
                         f"{self.settings.addr_source}): to follow the leader, give it too, "
                         f"e.g. addr='{addr},{leader}'")
            return leader
        if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise self._explain(e, addr)
        if e.code() == grpc.StatusCode.UNAVAILABLE:
            self._drop(addr)
        if write:
            raise UnavailableError(
                grpc.StatusCode.UNAVAILABLE,
                f"the master at {addr} failed during the call ({e.details()}), so the change "
                "may or may not have been made",
                hint="a change is never sent twice by itself: look before trying again")
        return None

    def stream(self, service: str, method: str, request: Any,
               timeout: Optional[float] = None) -> tuple[Any, Any]:
        """Opens a server stream (a read) by the rules of this module and reads its first
        message: (the call, which iterates over the rest and cancels; the first message)."""
        limit = time.monotonic() + (self.timeout if timeout is None else timeout)
        outage = _Outage(self, limit)
        while True:
            addr = self.address
            reason = self._ready(addr, min(limit, time.monotonic() + CONNECT_TIMEOUT), False)
            leader, answered = None, None
            if reason is None:
                call = getattr(self.stub(service, addr), method)(request, metadata=self.metadata)
                try:
                    first = next(call)
                    return call, first
                except StopIteration:
                    reason, answered = "the master ended the stream", grpc.StatusCode.UNAVAILABLE
                except grpc.RpcError as e:
                    leader = self._after_failure(e, addr, write=False)
                    reason, answered = e.details() or e.code().name, e.code()
            outage.next(addr, reason, leader, answered)
