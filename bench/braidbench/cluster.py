"""A throwaway PostgreSQL 15 cluster with braidsort, on an emulated DAX mount.

The benchmark runs as root (it mounts a tmpfs standing in for a DAX device);
the server runs as the postgres user, listening only on a unix socket in the
sandbox directory.  Everything -- server, mount, directories -- is removed on
exit, whatever happens (the class is a context manager).
"""
import contextlib
import os
import shutil
import subprocess
import tempfile
import time

import psycopg2

PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")


def run_as_postgres(args, **kw):
    """Run a command as the postgres OS user; raise on failure."""
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args,
                          check=True, **kw)


class Cluster:
    """A sandbox cluster: initdb, a tmpfs tablespace "dax", start, stop."""

    def __init__(self, port=5489, locale="en_US.UTF-8", tmpfs_size="4G",
                 settings=None):
        self.port = port
        self.locale = locale
        self.tmpfs_size = tmpfs_size
        self.settings = dict(settings or {})
        self.dir = None
        self.dax = None
        self.mounted = False
        self.running = False

    # -- life cycle -------------------------------------------------------
    def __enter__(self):
        try:
            self._create()
        except BaseException:
            self.destroy()
            raise
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False

    def _create(self):
        self.dir = tempfile.mkdtemp(prefix="braidbench.")
        self.dax = os.path.join(self.dir, "dax")
        os.makedirs(self.dax)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o",
                            f"size={self.tmpfs_size},mode=0700", "tmpfs", self.dax],
                           capture_output=True)
        if r.returncode == 0:
            self.mounted = True
            self.dax_kind = "tmpfs mount"
        else:
            # no mount allowed here: a directory in /dev/shm is a tmpfs too
            shutil.rmtree(self.dax)
            self.dax = tempfile.mkdtemp(prefix="braidbench-dax.", dir="/dev/shm")
            self.dax_kind = "/dev/shm directory"
        subprocess.run(["chown", "-R", "postgres:", self.dir, self.dax], check=True)
        initdb = [f"{PGBIN}/initdb", "-D", self.data, "-E", "UTF8", "-A", "trust"]
        initdb += ["--no-locale"] if self.locale in (None, "C") else [f"--locale={self.locale}"]
        run_as_postgres(initdb, stdout=subprocess.DEVNULL)
        conf = {
            "shared_preload_libraries": "'braidsort'",
            "port": str(self.port),
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self.dir}'",
            "logging_collector": "off",
        }
        conf.update(self.settings)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            for k, v in conf.items():
                f.write(f"{k} = {v}\n")
        self.start()
        with self.session() as conn:
            with conn.cursor() as cur:
                cur.execute(f"CREATE TABLESPACE dax LOCATION '{self.dax}'")
                cur.execute("CREATE EXTENSION braidsort")

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    def start(self):
        run_as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-l",
                         os.path.join(self.dir, "server.log"), "-w", "start"],
                        stdout=subprocess.DEVNULL)
        self.running = True

    def stop(self):
        if self.running:
            run_as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "fast",
                             "-w", "stop"], stdout=subprocess.DEVNULL)
            self.running = False

    def restart(self):
        self.stop()
        self.start()

    def set_conf(self, **settings):
        """Append settings to postgresql.conf (takes effect on restart/reload)."""
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            for k, v in settings.items():
                f.write(f"{k} = {v}\n")
                self.settings[k] = v

    def destroy(self):
        with contextlib.suppress(Exception):
            self.stop()
        if self.mounted:
            subprocess.run(["umount", self.dax])
            self.mounted = False
        if self.dax and not self.dax.startswith(self.dir or "\0"):
            shutil.rmtree(self.dax, ignore_errors=True)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    # -- sessions ---------------------------------------------------------
    def connect(self, dbname="postgres", options=None):
        return psycopg2.connect(host=self.dir, port=self.port, user="postgres",
                                dbname=dbname, options=options or "")

    @contextlib.contextmanager
    def session(self, dbname="postgres", options=None):
        """An autocommit connection, closed afterwards.  (psycopg2's own
        "with conn" opens a transaction block even in autocommit mode.)"""
        conn = self.connect(dbname, options)
        conn.autocommit = True
        try:
            yield conn
        finally:
            conn.close()

    def log_tail(self, n=50):
        with open(os.path.join(self.dir, "server.log")) as f:
            return "".join(f.readlines()[-n:])


def wait_quiet(max_load=1.0, timeout=60):
    """Wait (a while) for the 1-minute load average to drop below max_load."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.getloadavg()[0] < max_load:
            return True
        time.sleep(2)
    return False
