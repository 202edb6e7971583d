"""Tests of python_driver.py: the real driver as a subprocess, driven through real pipes on fds 3/4.

Run: /usr/bin/python3 -m unittest discover -s daemon/code/drivers -p test_python_driver.py
HOTLINE_DRIVER_DIR: the drivers' directory to test (default: this file's, e.g. dist/daemon/code/drivers).
HOTLINE_DRIVER_PYTHON: the interpreter that runs the driver (default: the one running the tests).
HOTLINE_REQUIRE_PYTHON=1: matplotlib, pandas and PIL must be there (else their tests are skipped).
"""

import fcntl
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER_DIR = os.environ.get("HOTLINE_DRIVER_DIR") or HERE
DRIVER = os.path.join(DRIVER_DIR, "python_driver.py")
PYTHON = os.environ.get("HOTLINE_DRIVER_PYTHON") or sys.executable
REQUIRED = os.environ.get("HOTLINE_REQUIRE_PYTHON") == "1"
# A bound on waiting for a message, so a broken driver fails the test instead of hanging it (not a timing assertion).
PATIENCE = 120.0


def _importable(*modules):
    probe = subprocess.run([PYTHON, "-c", "import " + ", ".join(modules)], capture_output=True)
    if probe.returncode != 0 and REQUIRED:
        raise RuntimeError("%s cannot import %s (HOTLINE_REQUIRE_PYTHON=1)" % (PYTHON, ", ".join(modules)))
    return probe.returncode == 0


HAVE_MATPLOTLIB = _importable("matplotlib")
HAVE_PANDAS = _importable("pandas")
HAVE_PIL = _importable("PIL")


def _above(fd, lowest):
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)
    os.close(fd)
    return moved


def png_size(data):
    """(width, height) from a PNG's IHDR chunk; fails the test's assertion if `data` is not a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG: %r" % data[:16]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


class Driver:
    """One driver process: requests on its fd 3, messages from its fd 4, its stdout/stderr collected."""

    def __init__(self, python=PYTHON, env=None):
        req_r, self.req_w = os.pipe()
        self.msg_r, msg_w = os.pipe()
        # The child's ends move above fd 9, so the shell's 3</4> redirections cannot overwrite them.
        req_r, msg_w = (_above(fd, 10) for fd in (req_r, msg_w))
        self.pipe_inodes = {os.fstat(self.req_w).st_ino, os.fstat(self.msg_r).st_ino}
        child_env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
        child_env.update(env or {})
        # bash (dash takes single-digit fds only) puts the pipes on fds 3 and 4 and execs the driver (same pid, own process group).
        script = 'exec "$@" 3<&%d 4>&%d %d<&- %d>&-' % (req_r, msg_w, req_r, msg_w)
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, "bash", python, "-u", DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(req_r, msg_w),
            start_new_session=True,
            env=child_env,
        )
        os.close(req_r)
        os.close(msg_w)
        self.files_dir = tempfile.mkdtemp(prefix="hotline-driver-files-")
        self.out = bytearray()
        self.err = bytearray()
        self.pending = b""
        self.messages = []
        self.selector = selectors.DefaultSelector()
        for fd, sink in ((self.proc.stdout.fileno(), self.out), (self.proc.stderr.fileno(), self.err), (self.msg_r, None)):
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ, sink)
        self.runs = 0
        self.ready = self.next_message()

    @property
    def pid(self):
        return self.proc.pid

    def _pump(self, timeout):
        """Reads whatever is readable within `timeout`; returns False once every stream is at EOF."""
        if not self.selector.get_map():
            return False
        for key, _ in self.selector.select(timeout):
            try:
                chunk = os.read(key.fd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                self.selector.unregister(key.fd)
            elif key.data is None:
                self.pending += chunk
                while b"\n" in self.pending:
                    line, self.pending = self.pending.split(b"\n", 1)
                    self.messages.append(json.loads(line.decode("utf-8")))
            else:
                key.data.extend(chunk)
        return True

    def _drain_output(self):
        """Everything already in the stdout/stderr pipes (what the daemon reads once more after "done")."""
        for fd, sink in ((self.proc.stdout.fileno(), self.out), (self.proc.stderr.fileno(), self.err)):
            while True:
                try:
                    chunk = os.read(fd, 1 << 20)
                except (BlockingIOError, OSError):
                    break
                if not chunk:
                    break
                sink.extend(chunk)

    def next_message(self, patience=PATIENCE):
        deadline = time.monotonic() + patience
        while not self.messages:
            if time.monotonic() > deadline or not self._pump(0.2) and not self.messages:
                raise AssertionError("no message from the driver; stderr: %s" % bytes(self.err[-4000:]).decode(errors="replace"))
        return self.messages.pop(0)

    def wait_output(self, needle, patience=PATIENCE):
        deadline = time.monotonic() + patience
        while needle not in self.out:
            if time.monotonic() > deadline or not self._pump(0.2):
                raise AssertionError("driver never wrote %r; stdout: %r" % (needle, bytes(self.out[-2000:])))

    def send(self, code, **fields):
        self.runs += 1
        run_id = fields.pop("id", "run%d" % self.runs)
        request = {"type": "run", "id": run_id, "code": code, "filesDir": self.files_dir, "maxInlineBytes": 1 << 20, "maxLineBytes": 8 << 20}
        request.update(fields)
        os.write(self.req_w, (json.dumps(request) + "\n").encode())
        return run_id

    def finish(self, run_id):
        """(displays, done) of a run; stdout/stderr hold every byte written before "done"."""
        displays = []
        while True:
            message = self.next_message()
            assert message.get("id") == run_id, message
            if message["type"] == "done":
                self._drain_output()
                return displays, message
            displays.append(message)

    def run(self, code, **fields):
        self.out.clear()
        self.err.clear()
        return self.finish(self.send(code, **fields))

    def result_text(self, code):
        _, done = self.run(code)
        assert done["status"] == "ok", done
        return done["result"]["data"]["text/plain"]

    def close(self):
        try:
            os.close(self.req_w)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        finally:
            self.selector.close()
            os.close(self.msg_r)
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc.stderr.close()
            for name in os.listdir(self.files_dir):
                os.unlink(os.path.join(self.files_dir, name))
            os.rmdir(self.files_dir)


def pending_signals(pid):
    """The signals pending for a process (thread and process-wide), as a bit mask (bit n-1 = signal n)."""
    mask = 0
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith(("SigPnd:", "ShdPnd:")):
                mask |= int(line.split()[1], 16)
    return mask


def sleeping(pid):
    with open("/proc/%d/stat" % pid) as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "S"


# A stdlib PNG encoder for user code (so the file and budget tests need no PIL): random RGB pixels.
NOISE_PNG = """
import os, struct, zlib
def noise_png(width, height):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\\x00" + os.urandom(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
class Noise:
    def __init__(self, width, height):
        self.png = noise_png(width, height)
    def _repr_png_(self):
        return self.png
"""


class DriverTestCase(unittest.TestCase):
    def setUp(self):
        self.driver = Driver()
        self.addCleanup(self.driver.close)


class SharedDriverTestCase(unittest.TestCase):
    """One driver for the whole class: matplotlib's and pandas' first import is the slow part."""

    warm_up = ""

    @classmethod
    def setUpClass(cls):
        cls.driver = Driver()
        _, done = cls.driver.run(cls.warm_up)
        assert done["status"] == "ok", done

    @classmethod
    def tearDownClass(cls):
        cls.driver.close()


class StateAndResults(DriverTestCase):
    def test_ready_names_the_interpreter(self):
        ready = self.driver.ready
        self.assertEqual(ready["type"], "ready")
        self.assertEqual(ready["protocol"], 1)
        self.assertEqual(ready["language"], "python")
        self.assertEqual(ready["pid"], self.driver.pid)
        self.assertTrue(os.path.isabs(ready["executable"]))
        self.assertRegex(ready["version"], r"^3\.\d+\.\d+$")

    def test_variables_persist_and_the_last_expression_is_the_result(self):
        _, done = self.driver.run("x = 41")
        self.assertEqual(done["status"], "ok")
        self.assertNotIn("result", done)
        self.assertEqual(done["names"], ["x"])
        _, done = self.driver.run("x + 1")
        self.assertEqual(done["result"]["data"], {"text/plain": "42"})
        self.assertEqual(done["executionCount"], 2)
        self.assertEqual(self.driver.result_text("_ * 2"), "84")

    def test_a_trailing_semicolon_or_none_gives_no_result(self):
        self.assertNotIn("result", self.driver.run("1 + 1;")[1])
        self.assertNotIn("result", self.driver.run("None")[1])
        self.assertNotIn("result", self.driver.run("print('x')")[1])

    def test_top_level_await(self):
        self.assertEqual(self.driver.result_text("import asyncio\nawait asyncio.sleep(0)\n7"), "7")
        self.assertEqual(self.driver.result_text("async def f():\n    return 8\nawait f()"), "8")

    def test_names_are_the_users_globals_only(self):
        _, done = self.driver.run("import os\n_private = 1\n__dunder__ = 2\ndef f(): pass")
        self.assertEqual(done["names"], ["_private", "f", "os"])
        listing = self.driver.result_text("import __main__\nsorted(k for k in vars(__main__) if not k.startswith('__'))")
        self.assertEqual(listing, "['_private', 'f', 'os']")

    def test_a_long_value_has_a_bounded_text_plain(self):
        text = self.driver.result_text("list(range(10**6))")
        self.assertLess(len(text), 70_000)
        self.assertTrue(text.startswith("[0, 1, 2"))

    def test_a_20_mb_cell_runs(self):
        text = "0123456789" * 2_000_000
        self.assertEqual(self.driver.result_text("s = '%s'\nlen(s)" % text), "20000000")

    def test_user_modules_import_from_the_working_directory_not_the_drivers(self):
        self.assertEqual(self.driver.result_text("import sys\nsys.path[0]"), "''")
        for module in ("python_driver", "hotline_python_driver"):
            _, done = self.driver.run("import " + module)
            self.assertEqual(done["error"]["name"], "ModuleNotFoundError", done)


class Errors(DriverTestCase):
    def test_an_exception_is_an_error_with_the_users_traceback_and_the_context_stays(self):
        self.driver.run("x = 41")
        self.driver.run("def check(v):\n    if v:\n        raise ValueError('boom')")
        _, done = self.driver.run('y = 1\nraise ValueError("boom")')
        self.assertEqual(done["status"], "error")
        error = done["error"]
        self.assertEqual((error["name"], error["value"]), ("ValueError", "boom"))
        self.assertIn('  File "<cell 3>", line 2, in <module>', error["traceback"])
        self.assertIn('    raise ValueError("boom")', error["traceback"])
        self.assertEqual(error["traceback"][-1], "ValueError: boom")
        self.assertFalse(any("python_driver" in line for line in error["traceback"]), error["traceback"])
        # A function of an earlier cell shows that cell's line.
        _, done = self.driver.run("check(1)")
        self.assertIn('  File "<cell 2>", line 3, in check', done["error"]["traceback"])
        self.assertIn("    raise ValueError('boom')", done["error"]["traceback"])
        self.assertEqual(self.driver.result_text("(x, y)"), "(41, 1)")

    def test_system_exit_ends_the_run_not_the_context(self):
        self.driver.run("x = 1")
        for code in ("import sys; sys.exit(3)", "exit()", "quit(4)"):
            _, done = self.driver.run(code)
            self.assertEqual(done["status"], "error")
            self.assertEqual(done["error"]["name"], "SystemExit")
            self.assertFalse(any("python_driver" in line for line in done["error"]["traceback"]))
        self.assertEqual(done["error"]["value"], "4")
        self.assertEqual(self.driver.result_text("x"), "1")
        # site's exit() would have closed stdin; this one leaves it open.
        self.assertEqual(self.driver.result_text("import sys; sys.stdin.closed"), "False")

    def test_a_huge_error_message_and_a_deep_traceback_are_bounded(self):
        _, done = self.driver.run("raise ValueError('x' * 10_000_000)")
        self.assertEqual(done["error"]["name"], "ValueError")
        self.assertLess(len(done["error"]["value"]), 70_000)
        self.assertTrue(done["error"]["value"].endswith("more characters]"))
        self.assertLess(sum(len(line) for line in done["error"]["traceback"]), 300_000)
        _, done = self.driver.run("def down(n):\n    if n:\n        down(n - 1)\n    else:\n        raise KeyError('bottom')\ndown(900)")
        self.assertEqual(done["error"]["traceback"][-1], "KeyError: 'bottom'")

    def test_a_syntax_error_points_at_the_line(self):
        _, done = self.driver.run("x = (")
        self.assertEqual(done["status"], "error")
        self.assertEqual(done["error"]["name"], "SyntaxError")
        self.assertIn('  File "<cell 1>", line 1', done["error"]["traceback"])


class Interrupts(DriverTestCase):
    def test_sigint_interrupts_a_busy_loop_and_the_variables_stay(self):
        self.driver.run("x = 41")
        run_id = self.driver.send("print('spinning', flush=True)\nwhile True:\n    pass")
        self.driver.wait_output(b"spinning")
        os.kill(self.driver.pid, signal.SIGINT)
        _, done = self.driver.finish(run_id)
        self.assertEqual(done["status"], "interrupted")
        self.assertEqual(done["error"]["name"], "KeyboardInterrupt")
        self.assertTrue(any("<cell 2>" in line for line in done["error"]["traceback"]))
        self.assertEqual(self.driver.result_text("x"), "41")

    def test_sigint_interrupts_a_sleep(self):
        run_id = self.driver.send("import time\nprint('sleeping', flush=True)\ntime.sleep(600)")
        self.driver.wait_output(b"sleeping")
        os.kill(self.driver.pid, signal.SIGINT)
        self.assertEqual(self.driver.finish(run_id)[1]["status"], "interrupted")

    def test_sigint_while_idle_is_harmless(self):
        self.driver.run("x = 41")
        os.kill(self.driver.pid, signal.SIGINT)
        # Delivered (not pending) and back asleep in its read of fd 3: the handler ran and returned.
        deadline = time.monotonic() + PATIENCE
        while pending_signals(self.driver.pid) & (1 << (signal.SIGINT - 1)) or not sleeping(self.driver.pid):
            self.assertLess(time.monotonic(), deadline, "the driver never took the signal")
            time.sleep(0.01)
        self.assertIsNone(self.driver.proc.poll())
        self.assertEqual(self.driver.result_text("x + 1"), "42")

    def test_a_storm_of_sigints_never_tears_a_message_nor_ends_the_driver(self):
        # SIGINTs every half millisecond while runs start, run and report: each run still ends with one
        # whole "done" (ok or interrupted), and the driver lives on.
        import threading

        statuses = []
        for i in range(10):
            stop = threading.Event()

            def storm():
                while not stop.is_set():
                    os.kill(self.driver.pid, signal.SIGINT)
                    time.sleep(0.0005)

            thread = threading.Thread(target=storm)
            run_id = self.driver.send("x = %d\nfor _ in range(100000):\n    pass\nx" % i)
            thread.start()
            try:
                _, done = self.driver.finish(run_id)
            finally:
                stop.set()
                thread.join()
            statuses.append(done["status"])
        self.assertTrue(set(statuses) <= {"ok", "interrupted"}, statuses)
        self.assertIsNone(self.driver.proc.poll())
        self.assertIn(self.driver.result_text("x"), [str(i) for i in range(10)])

    def test_a_cell_that_takes_over_sigint_does_not_make_idle_sigint_fatal(self):
        _, done = self.driver.run("import signal\nsignal.signal(signal.SIGINT, signal.SIG_DFL)\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\nx = 1")
        self.assertEqual(done["status"], "ok")
        os.kill(self.driver.pid, signal.SIGINT)
        deadline = time.monotonic() + PATIENCE
        while pending_signals(self.driver.pid) & (1 << (signal.SIGINT - 1)) or not sleeping(self.driver.pid):
            self.assertLess(time.monotonic(), deadline, "the driver never took the signal")
            time.sleep(0.01)
        self.assertEqual(self.driver.result_text("x"), "1")
        run_id = self.driver.send("print('spinning', flush=True)\nwhile True:\n    pass")
        self.driver.wait_output(b"spinning")
        os.kill(self.driver.pid, signal.SIGINT)
        self.assertEqual(self.driver.finish(run_id)[1]["status"], "interrupted")

    def test_a_hang_with_sigint_blocked_is_not_ended_by_sigint_only_by_kill(self):
        # What the daemon's interrupt -> grace -> kill of the process group is for.
        run_id = self.driver.send(
            "import os, signal\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
            "r, w = os.pipe()\n"
            "print('blocked', flush=True)\n"
            "os.read(r, 1)\n"
        )
        self.driver.wait_output(b"blocked")
        os.kill(self.driver.pid, signal.SIGINT)
        self.assertTrue(pending_signals(self.driver.pid) & (1 << (signal.SIGINT - 1)), "SIGINT should stay pending")
        self.driver._pump(1.0)
        self.assertEqual(self.driver.messages, [], "SIGINT must not have ended the run")
        self.assertIsNone(self.driver.proc.poll())
        os.killpg(self.driver.pid, signal.SIGKILL)
        self.assertEqual(self.driver.proc.wait(timeout=PATIENCE), -signal.SIGKILL)
        _ = run_id


class Output(DriverTestCase):
    def test_20_mb_of_print_output_arrives_byte_exact_before_done(self):
        lines = 20 * 1024
        code = "body = 'abcdefghijklmnop' * 64\nfor i in range(%d):\n    print('%%07d:%%s' %% (i, body[: 1015 - i %% 7]))" % lines
        _, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        body = "abcdefghijklmnop" * 64
        expected = "".join("%07d:%s\n" % (i, body[: 1015 - i % 7]) for i in range(lines)).encode()
        self.assertGreater(len(expected), 20_000_000)
        self.assertEqual(len(self.driver.out), len(expected))
        self.assertTrue(self.driver.out == expected)

    def test_c_stdio_and_stderr_are_flushed_before_done(self):
        _, done = self.driver.run("import ctypes, sys\nctypes.CDLL(None).printf(b'from C\\n')\nsys.stderr.write('to stderr')\nprint('end', end='')")
        self.assertEqual(done["status"], "ok")
        self.assertIn(b"from C\n", self.driver.out)
        self.assertTrue(self.driver.out.endswith(b"end") or b"end" in self.driver.out)
        self.assertEqual(bytes(self.driver.err), b"to stderr")

    def test_display_sends_rich_outputs_in_order(self):
        code = (
            "class Rich:\n"
            "    def _repr_mimebundle_(self, include=None, exclude=None):\n"
            "        return {'text/html': '<b>rich</b>', 'application/json': {'a': [1, 2]}}\n"
            "    def _repr_markdown_(self):\n"
            "        return '**md**'\n"
            "    def __repr__(self):\n"
            "        return 'Rich()'\n"
            "class Broken:\n"
            "    def _repr_html_(self):\n"
            "        raise RuntimeError('no html')\n"
            "    def __repr__(self):\n"
            "        return 'Broken()'\n"
            "display(Rich())\n"
            "display({'text/plain': 'raw', 'text/markdown': '# raw'}, raw=True)\n"
            "display(Broken())\n"
            "display(Rich)\n"
        )
        displays, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        self.assertEqual(
            [d["data"] for d in displays],
            [
                {"text/plain": "Rich()", "text/html": "<b>rich</b>", "application/json": {"a": [1, 2]}, "text/markdown": "**md**"},
                {"text/plain": "raw", "text/markdown": "# raw"},
                {"text/plain": "Broken()"},
                {"text/plain": "<class '__main__.Rich'>"},
            ],
        )
        self.assertIn(b"no html", self.driver.err)


class LargeValues(DriverTestCase):
    def test_a_value_over_max_inline_bytes_goes_to_a_file(self):
        self.driver.run(NOISE_PNG)
        _, done = self.driver.run("Noise(400, 300)", id="big", maxInlineBytes=100_000)
        self.assertEqual(done["status"], "ok")
        result = done["result"]
        self.assertEqual(list(result["data"]), ["text/plain"])
        path = result["files"]["image/png"]
        self.assertEqual(path, os.path.join(self.driver.files_dir, "big-1.png"))
        with open(path, "rb") as f:
            self.assertEqual(png_size(f.read()), (400, 300))
        self.assertEqual(result["metadata"]["image/png"], {"width": 400, "height": 300})

    def test_values_beyond_the_run_budget_are_listed_as_omitted(self):
        self.driver.run(NOISE_PNG)
        _, done = self.driver.run("display(Noise(100, 100))\nNoise(200, 200)", maxRunBytes=60_000)
        self.assertEqual(done["status"], "ok")
        self.assertEqual(list(done["result"]["data"]), ["text/plain"])
        self.assertEqual([o["mime"] for o in done["omitted"]], ["image/png"])
        self.assertEqual(done["omitted"][0]["why"], "over the run's budget")
        self.assertGreater(done["omitted"][0]["bytes"], 60_000)


    def test_omitted_values_are_listed_up_to_100_then_summed_and_empty_displays_are_not_sent(self):
        displays, done = self.driver.run("for i in range(1000):\n    display('%06d' % i)", maxRunBytes=100)
        self.assertTrue(all(d["data"] for d in displays))
        self.assertLess(len(displays), 20)
        self.assertEqual(len(done["omitted"]), 101)
        self.assertEqual(done["omitted"][-1]["mime"], "*")
        self.assertRegex(done["omitted"][-1]["why"], r"^\d+ more values omitted$")


class Channel(DriverTestCase):
    def test_the_channel_fds_are_close_on_exec_and_not_inherited(self):
        for fd in (3, 4):
            with open("/proc/%d/fdinfo/%d" % (self.driver.pid, fd)) as info:
                flags = int(next(line for line in info if line.startswith("flags:")).split()[1], 8)
            self.assertTrue(flags & 0o2000000, "fd %d lacks O_CLOEXEC" % fd)
        code = (
            "import os, subprocess\n"
            "probe = 'for fd in 3 4; do readlink /proc/$$/fd/$fd; done; true'\n"
            "os.system(probe)\n"
            "subprocess.run(probe, shell=True, close_fds=False)\n"
            "pid = os.posix_spawn('/bin/sh', ['sh', '-c', probe], os.environ)\n"
            "os.waitpid(pid, 0)\n"
        )
        _, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        for inode in self.driver.pipe_inodes:
            self.assertNotIn(b"pipe:[%d]" % inode, self.driver.out)

    def test_a_forked_child_that_returns_to_the_driver_does_not_answer(self):
        _, done = self.driver.run("import os\npid = os.fork()\nif pid == 0:\n    print('child')\nelse:\n    os.waitpid(pid, 0)\npid")
        self.assertEqual(done["status"], "ok")
        self.assertIn(b"child", self.driver.out)
        self.assertEqual(self.driver.result_text("1"), "1")  # exactly one "done" per run
        self.assertEqual(self.driver.messages, [])

    def test_eof_on_fd_3_ends_the_driver_with_status_0(self):
        os.close(self.driver.req_w)
        self.assertEqual(self.driver.proc.wait(timeout=PATIENCE), 0)


@unittest.skipUnless(HAVE_MATPLOTLIB, "matplotlib is not importable by %s" % PYTHON)
class Matplotlib(SharedDriverTestCase):
    warm_up = "import matplotlib.pyplot as plt"

    def test_an_open_figure_comes_back_as_a_png_of_its_pixel_size(self):
        code = "import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(4, 3), dpi=50)\nplt.plot([1, 2, 3], [1, 4, 9])"
        displays, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        self.assertEqual(len(displays), 1)
        png = __import__("base64").b64decode(displays[0]["data"]["image/png"])
        self.assertEqual(png_size(png), (200, 150))
        self.assertEqual(displays[0]["metadata"]["image/png"], {"width": 200, "height": 150})
        self.assertEqual(displays[0]["data"]["text/plain"], "<Figure size 200x150 with 1 Axes>")
        # Closed once shown: the next run sends nothing.
        displays, _ = self.driver.run("1")
        self.assertEqual(displays, [])

    def test_show_sends_at_once_and_a_tight_bbox_setting_does_not_crop(self):
        code = (
            "import matplotlib.pyplot as plt\n"
            "plt.rcParams['savefig.bbox'] = 'tight'\n"
            "plt.plot([1, 2])\n"
            "plt.show()\n"
            "print('after show', flush=True)\n"
        )
        displays, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        self.assertEqual(len(displays), 1)
        self.assertEqual(png_size(__import__("base64").b64decode(displays[0]["data"]["image/png"])), (640, 480))

    def test_a_figure_as_the_result_is_sent_once(self):
        displays, done = self.driver.run("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(2, 1), dpi=100)\nfig")
        self.assertEqual(displays, [])
        self.assertEqual(png_size(__import__("base64").b64decode(done["result"]["data"]["image/png"])), (200, 100))

    def test_figures_drawn_before_an_error_still_come_back(self):
        displays, done = self.driver.run("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nraise RuntimeError('after the plot')")
        self.assertEqual(done["status"], "error")
        self.assertEqual(len(displays), 1)

    def test_no_backend_variable_leaks_to_child_processes(self):
        code = (
            "import subprocess, sys\n"
            "child = 'import os, matplotlib.pyplot as plt; plt.figure(); print(os.environ.get(\"MPLBACKEND\"), plt.get_backend())'\n"
            "print(subprocess.run([sys.executable, '-c', child], capture_output=True, text=True).stdout)\n"
        )
        _, done = self.driver.run(code)
        self.assertEqual(done["status"], "ok")
        self.assertEqual(self.driver.out.decode().split(), ["None", "agg"])


@unittest.skipUnless(HAVE_PANDAS, "pandas is not importable by %s" % PYTHON)
class Pandas(SharedDriverTestCase):
    warm_up = "import pandas as pd"

    def test_a_dataframe_is_html_and_plain_text(self):
        _, done = self.driver.run("import pandas as pd\npd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3.5, 19.25]})")
        data = done["result"]["data"]
        for cell in ("<td>Oslo</td>", "<td>Lima</td>", "<td>3.50</td>", "<td>19.25</td>", "<th>city</th>", "<th>temp</th>"):
            self.assertIn(cell, data["text/html"])
        self.assertIn("Oslo", data["text/plain"])
        self.assertIn("19.25", data["text/plain"])


@unittest.skipUnless(HAVE_PIL, "PIL is not importable by %s" % PYTHON)
class Pillow(SharedDriverTestCase):
    def test_a_pil_image_is_a_png(self):
        _, done = self.driver.run("from PIL import Image\nImage.new('RGB', (30, 20), 'red')")
        data = done["result"]["data"]
        self.assertEqual(sorted(data), ["image/png", "text/plain"])
        self.assertEqual(png_size(__import__("base64").b64decode(data["image/png"])), (30, 20))


if __name__ == "__main__":
    unittest.main()
