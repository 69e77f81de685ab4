"""A throwaway PostgreSQL cluster with braidsort, on an emulated DAX mount.

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



def _pg_major():
    """The PostgreSQL major benchmarked: Debian 12's 15, or the major of the
    root scripts/pgroot.sh made, where the benchmark runs inside one."""
    try:
        with open("/etc/braidsort-pgroot") as f:
            return f.read().strip()
    except OSError:
        return "15"


PG_MAJOR = _pg_major()
PGBIN = os.environ.get("PGBIN", f"/usr/lib/postgresql/{PG_MAJOR}/bin")
PG_CONFIG = f"{PGBIN}/pg_config"

# A throwaway, read-only benchmark cluster: make loading cheap, keep it
# quiet.  None of these changes how a sort runs (temporary files are never
# fsynced), only how fast the tables load.
FAST_LOAD = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "max_wal_size": "'8GB'",
    "checkpoint_timeout": "'1h'",
    "autovacuum": "off",
}


def run_as_postgres(args, **kw):
    """Run a command as the postgres OS user; raise on failure."""
    return subprocess.run(["runuser", "-u", "postgres", "--"] + args,
                          check=True, **kw)


def quote(value):
    """A value as a SQL literal (for utility statements, which take no
    parameters)."""
    from psycopg import sql
    return sql.Literal(str(value)).as_string(None)


class Cluster:
    """A sandbox cluster: initdb, a tmpfs tablespace "dax", start, stop."""

    def __init__(self, port=5488, locale="en_US.UTF-8", tmpfs_size="4G",
                 settings=None, spill_to_dax=True):
        self.port = port
        self.locale = locale
        self.tmpfs_size = tmpfs_size
        self.settings = dict(settings or {})
        self.spill_to_dax = spill_to_dax
        self.dir = None
        self.dax = None
        self.dax_kind = None
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
        os.chmod(self.dir, 0o755)
        self.dax = os.path.join(self.dir, "dax")
        os.makedirs(self.dax)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o",
                            f"size={self.tmpfs_size},mode=0700", "tmpfs", self.dax],
                           capture_output=True)
        if r.returncode == 0:
            self.mounted = True
            self.dax_kind = f"tmpfs mount (size={self.tmpfs_size})"
        else:
            # no mount allowed here: a directory in /dev/shm is a tmpfs too
            shutil.rmtree(self.dax)
            self.dax = tempfile.mkdtemp(prefix="braidbench-dax.", dir="/dev/shm")
            self.dax_kind = "directory on /dev/shm (mounting a tmpfs was not permitted)"
        subprocess.run(["chown", "-R", "postgres:", self.dir, self.dax], check=True)
        initdb = [f"{PGBIN}/initdb", "-D", self.data, "-E", "UTF8", "-A", "trust",
                  "-U", "postgres"]
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
        self.conf = conf
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# ---- bench/braidbench ----\n")
            for k, v in conf.items():
                f.write(f"{k} = {v}\n")
        self.start()
        with self.session() as conn:
            conn.execute(f"CREATE TABLESPACE dax LOCATION {quote(self.dax)}")
            conn.execute("CREATE EXTENSION braidsort")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            if self.spill_to_dax:
                # PostgreSQL's temporary files and braidsort's spill files
                # on the same (emulated DAX) medium
                conn.execute("ALTER SYSTEM SET temp_tablespaces = 'dax'")
                conn.execute("ALTER SYSTEM SET braidsort.spill_tablespace = 'dax'")
                conn.execute("SELECT pg_reload_conf()")
        if self.spill_to_dax:
            self.wait_setting("temp_tablespaces", "dax")
            self.wait_setting("braidsort.spill_tablespace", "dax")

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    @property
    def log_path(self):
        return os.path.join(self.dir, "server.log")

    def start(self):
        try:
            run_as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-l", self.log_path,
                             "-w", "-t", "120", "start"], stdout=subprocess.DEVNULL)
        except subprocess.CalledProcessError:
            raise RuntimeError("the server did not start:\n" + self.log_tail(30))
        self.running = True

    def stop(self):
        if self.running:
            try:
                run_as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "fast",
                                 "-w", "-t", "120", "stop"], stdout=subprocess.DEVNULL)
            except subprocess.CalledProcessError:
                run_as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "immediate",
                                 "-w", "-t", "60", "stop"], stdout=subprocess.DEVNULL)
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
            r = subprocess.run(["umount", self.dax], capture_output=True)
            if r.returncode != 0:
                time.sleep(1)
                r = subprocess.run(["umount", self.dax], capture_output=True)
            if r.returncode != 0:
                subprocess.run(["umount", "-l", self.dax])
            self.mounted = False
        if self.dax and not self.dax.startswith(self.dir or "\0"):
            shutil.rmtree(self.dax, ignore_errors=True)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    # -- sessions ---------------------------------------------------------
    def connect(self, dbname="postgres", options=None):
        """An autocommit connection (each statement its own transaction, as
        in psql)."""
        import psycopg
        return psycopg.connect(host=self.dir, port=self.port, user="postgres",
                               dbname=dbname, options=options or "", autocommit=True)

    @contextlib.contextmanager
    def session(self, dbname="postgres", options=None):
        """An autocommit connection, closed afterwards."""
        conn = self.connect(dbname, options)
        try:
            yield conn
        finally:
            conn.close()

    def show(self, name):
        """A setting as a new session sees it."""
        with self.session() as conn:
            return conn.execute(f"SHOW {name}").fetchone()[0]

    def wait_setting(self, name, value, timeout=10.0):
        """Wait until a new session sees name = value (the postmaster
        rereads its configuration asynchronously after pg_reload_conf())."""
        deadline = time.time() + timeout
        while True:
            cur = self.show(name)
            if cur == str(value):
                return
            if time.time() > deadline:
                raise RuntimeError(f"{name}: a new session's SHOW says {cur!r}, "
                                   f"{timeout:.0f}s after setting it to {value!r}")
            time.sleep(0.1)

    def set_sighup(self, name, value):
        """A server-wide (PGC_SIGHUP) parameter: ALTER SYSTEM SET and
        pg_reload_conf(), then wait until new sessions see it."""
        with self.session() as conn:
            conn.execute(f"ALTER SYSTEM SET {name} = {quote(value)}")
            conn.execute("SELECT pg_reload_conf()")
        self.wait_setting(name, value)

    def reset_sighup(self, name):
        with self.session() as conn:
            conn.execute(f"ALTER SYSTEM RESET {name}")
            conn.execute("SELECT pg_reload_conf()")

    def log_tail(self, n=50):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


def wait_quiet(max_load=1.0, timeout=60):
    """Wait (a while) for the 1-minute load average to drop below max_load."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.getloadavg()[0] < max_load:
            return True
        time.sleep(2)
    return False
