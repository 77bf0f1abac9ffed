"""A throwaway PostgreSQL cluster for tests: initdb and pg_ctl in a temporary folder, listening on
a free loopback port, run by an unprivileged user (as root: `postgres`, which Debian's package
creates, else `nobody`, through runuser).

Used by the session fixtures `postgres_cluster` and `postgres_url` in tests/conftest.py:

    def test_something(postgres_cluster):
        url = postgres_cluster.create_database("shop", sql=Path("shop.sql"))
        postgres_cluster.execute("CREATE ROLE reader LOGIN", database="shop")

The server binaries are found in $SCHEMARAG_PG_BIN, else the newest /usr/lib/postgresql/*/bin
(Debian and Ubuntu), else on PATH. `unavailable()` says why the cluster cannot run, for a skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

SUPERUSER = "postgres"


def find_bindir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    named = os.environ.get("SCHEMARAG_PG_BIN")
    if named:
        return Path(named) if (Path(named) / "initdb").exists() else None

    def version(initdb: str) -> int:
        name = Path(initdb).parent.parent.name
        return int(name) if name.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _os_user() -> str | None:
    """Who runs the server: ourselves, or as root an unprivileged account (PostgreSQL refuses
    to run as root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def unavailable() -> str | None:
    """Why a cluster cannot be started here, or None when it can."""
    if find_bindir() is None:
        return (
            "PostgreSQL server binaries not found (apt-get install postgresql, or set "
            "SCHEMARAG_PG_BIN to the folder holding initdb)"
        )
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[live]')"
    if os.geteuid() == 0 and (_os_user() is None or shutil.which("runuser") is None):
        return "running as root without runuser or an unprivileged user (postgres, nobody)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresCluster:
    bindir: Path
    root: Path
    port: int
    password: str
    os_user: str | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(
        self, database: str = "postgres", user: str = SUPERUSER, password: str | None = None
    ) -> str:
        """A SQLAlchemy URL (psycopg 3); the superuser's password unless another is given."""
        secret = self.password if password is None else password
        auth = f"{quote(user, safe='')}:{quote(secret, safe='')}" if secret else quote(user)
        return f"postgresql+psycopg://{auth}@127.0.0.1:{self.port}/{quote(database, safe='')}"

    def connect(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user=SUPERUSER,
            password=self.password,
            dbname=database,
            autocommit=True,
        )

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run a script (several statements, one implicit transaction) as the superuser."""
        with self.connect(database) as conn:
            conn.execute(sql.encode("utf-8"))

    def query(self, sql: str, database: str = "postgres") -> list[tuple[Any, ...]]:
        with self.connect(database) as conn:
            return list(conn.execute(sql.encode("utf-8")).fetchall())

    def load_sql(self, path: Path, database: str = "postgres") -> None:
        self.execute(Path(path).read_text(encoding="utf-8"), database)

    def create_database(self, name: str, sql: Path | str | None = None) -> str:
        """A new database (dropped first if it exists), loaded with `sql` (a file or a script);
        returns its superuser URL."""
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.execute(f'CREATE DATABASE "{name}"')
        if isinstance(sql, Path):
            self.load_sql(sql, name)
        elif sql:
            self.execute(sql, name)
        return self.url(name)

    def backends(self, database: str) -> int:
        """Other sessions connected to `database` (to wait for clients to finish)."""
        rows = self.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = "
            f"'{database}' AND pid <> pg_backend_pid()"
        )
        return int(rows[0][0])

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            pg_ctl = str(self.bindir / "pg_ctl")
            _run(self, [pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"])
        shutil.rmtree(self.root, ignore_errors=True)


def _run(cluster: PostgresCluster, command: list[str], timeout: float = 60) -> None:
    if cluster.os_user is not None:
        command = ["runuser", "-u", cluster.os_user, "--", *command]
    done = subprocess.run(
        command, cwd=cluster.root, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        log = cluster.root / "server.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(
            f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()} {tail}"
        )


def start_cluster(attempts: int = 3) -> PostgresCluster:
    """initdb and start a cluster; the caller stops it (`stop()` also deletes its folder)."""
    bindir = find_bindir()
    if bindir is None:
        raise RuntimeError(unavailable() or "no PostgreSQL binaries")
    user = _os_user()
    parent = Path(tempfile.gettempdir())
    if user is not None and not parent.stat().st_mode & 0o001:
        parent = Path("/tmp")  # the server's user must be able to reach its folder
    root = Path(tempfile.mkdtemp(prefix="schemarag-pg-", dir=parent))
    cluster = PostgresCluster(bindir, root, 0, secrets.token_urlsafe(12), user)
    try:
        (root / "pw").write_text(cluster.password + "\n")
        if user is not None:
            owner = pwd.getpwnam(user)
            for path in (root, root / "pw"):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        os.chmod(root, 0o700)
        _run(
            cluster,
            [
                str(bindir / "initdb"),
                "-D",
                str(cluster.data),
                "-U",
                SUPERUSER,
                f"--pwfile={root / 'pw'}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )
        for attempt in range(attempts):
            cluster.port = _free_port()
            options = " ".join(
                [
                    "-c listen_addresses=127.0.0.1",
                    f"-p {cluster.port}",
                    f"-k {root}",
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                    "-c autovacuum=off -c max_connections=40 -c shared_buffers=32MB",
                ]
            )
            try:
                _run(
                    cluster,
                    [
                        str(bindir / "pg_ctl"),
                        "-D",
                        str(cluster.data),
                        "-l",
                        str(root / "server.log"),
                        "-w",
                        "-t",
                        "60",
                        "-o",
                        options,
                        "start",
                    ],
                    timeout=90,
                )
                break
            except RuntimeError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.2)  # the port was taken between the probe and the start
        return cluster
    except BaseException:
        cluster.stop()
        raise
