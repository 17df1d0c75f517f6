"""Session fixtures for the ported Kubernetes conformance tests.

One shepherd-apiserver is started for the whole session on a fresh temporary data dir
(``--port 0 --port-file``), the tests wait for ``/readyz`` and talk to it over plain HTTP
on 127.0.0.1 with the official Python client; at the end the server is stopped by PID
(SIGTERM, then SIGKILL after 10 s), also when tests failed.

Environment:
  SHEPHERD_APISERVER         path of the binary (default build/cmd/shepherd-apiserver)
  SHEPHERD_CONFORMANCE_KEEP  keep the temporary data dir and server log (default: removed)
  SHEPHERD_CONFORMANCE_TEST_TIMEOUT  seconds before one test is aborted (default 150)
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import pytest

from e2e_framework import Framework, new_api_client

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SERVER_BIN = os.environ.get(
    "SHEPHERD_APISERVER", os.path.join(REPO, "build", "cmd", "shepherd-apiserver"))
STARTUP_TIMEOUT = 30.0
STOP_GRACE = 10.0
TEST_TIMEOUT = int(os.environ.get("SHEPHERD_CONFORMANCE_TEST_TIMEOUT", "150"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "conformance(codename): the upstream Kubernetes conformance codename")


class ShepherdServer:
    def __init__(self, workdir):
        self.workdir = workdir
        self.data_dir = os.path.join(workdir, "data")
        self.port_file = os.path.join(workdir, "port")
        self.log_path = os.path.join(workdir, "server.log")
        self.proc = None
        self.port = None

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(
                [SERVER_BIN, "--data-dir", self.data_dir, "--port", "0",
                 "--port-file", self.port_file],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("shepherd-apiserver exited with %s during startup:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            if time.monotonic() > deadline:
                raise RuntimeError("shepherd-apiserver not ready after %ss:\n%s"
                                   % (STARTUP_TIMEOUT, self.log_tail()))
            if self.port is None:
                try:
                    with open(self.port_file) as f:
                        text = f.read().strip()
                    if text.isdigit():
                        self.port = int(text)
                except OSError:
                    pass
            if self.port is not None:
                try:
                    with urllib.request.urlopen(self.base_url + "/readyz", timeout=2) as r:
                        if r.status == 200:
                            return self
                except OSError:
                    pass
            time.sleep(0.05)

    def log_tail(self, n=4000):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        """SIGTERM by PID, SIGKILL after STOP_GRACE; returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                try:
                    os.kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="session")
def shepherd():
    if not os.access(SERVER_BIN, os.X_OK):
        pytest.fail("shepherd-apiserver binary not found at %s (set SHEPHERD_APISERVER)"
                    % SERVER_BIN, pytrace=False)
    workdir = tempfile.mkdtemp(prefix="shepherd-conformance-")
    server = ShepherdServer(workdir)
    try:
        server.start()
        print("\nshepherd-apiserver pid %d on %s (log %s)"
              % (server.proc.pid, server.base_url, server.log_path))
        yield server
    finally:
        was_running = server.proc is not None and server.proc.poll() is None
        rc = server.stop()
        if os.environ.get("SHEPHERD_CONFORMANCE_KEEP"):
            print("\nkept %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
        if server.proc is not None and not was_running:
            print("\nshepherd-apiserver had exited by itself with status %s" % rc)


@pytest.fixture(scope="session")
def api_client(shepherd):
    """An official-client ApiClient configured for the session's server."""
    c = new_api_client(shepherd.base_url)
    yield c
    c.close()


@pytest.fixture
def new_framework(api_client):
    """``new_framework(baseName, podSecurityLevel)``: framework.NewDefaultFramework.

    Creates the per-test namespace at once (upstream's BeforeEach) and deletes every
    namespace the test created at teardown (upstream's AfterEach).
    """
    made = []

    def make(base_name, pod_security_level="restricted"):
        f = Framework(api_client, base_name, pod_security_level)
        made.append(f)
        f.before_each()
        return f

    yield make
    failures = []
    for f in made:
        try:
            f.after_each()
        except BaseException as err:  # pytest.fail's exception is not an Exception
            failures.append(str(err))
    if failures:
        pytest.fail("; ".join(failures), pytrace=False)


class _TestTimeout(BaseException):
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Abort a test that runs longer than TEST_TIMEOUT (SIGALRM in the main thread)."""

    def on_alarm(signum, frame):
        raise _TestTimeout("test exceeded %ss" % TEST_TIMEOUT)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
