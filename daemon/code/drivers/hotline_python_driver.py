"""hotline's Python driver (loaded by python_driver.py): one code context's interpreter, driven by
the daemon one run at a time.

Wire protocol v1 (PROTOCOL.md beside this file): NDJSON requests on fd 3, NDJSON messages on fd 4;
fds 0/1/2 are the user's own. Standard library only; Python >= 3.8.
"""

import _thread
import ast
import binascii  # not base64, which imports re
import builtins
import heapq
import json
import linecache
import os
import signal
import sys
import types

# The channel (made close-on-exec by python_driver.py before this module is loaded).
REQUEST_FD = 3
MESSAGE_FD = 4

DRIVER_DIR = os.path.dirname(os.path.abspath(__file__))
# The file name the driver's own frames carry (as compiled: relative or absolute as Python chose).
DRIVER_FILE = (lambda: None).__code__.co_filename
BACKEND_MODULE = "hotline_matplotlib_backend"
BACKEND_FILE = os.path.join(DRIVER_DIR, BACKEND_MODULE + ".py")

DEFAULT_MAX_INLINE = 1 << 20
DEFAULT_MAX_LINE = 8 << 20
DEFAULT_RUN_BUDGET = 64 << 20
# text/plain is always inline, so it is bounded on its own (characters, then bytes).
PLAIN_TEXT_LIMIT = 64 * 1024
# Cell sources kept for tracebacks (linecache): the newest ones, up to this many characters.
CELL_SOURCE_BUDGET = 16 << 20
NAMES_LIMIT = 256
NAME_CHARS = 1024  # a longer global name (only made through globals()[...]) is counted, not listed
# An error's message, and its traceback as a whole, are bounded (characters); a line of it too.
ERROR_VALUE_LIMIT = 64 * 1024
TRACEBACK_LIMIT = 256 * 1024
TRACEBACK_LINE_LIMIT = 8 * 1024
OMITTED_LIMIT = 100  # entries listed one by one; the rest are summed up in one more
# Room kept in a message line for everything but the bundle's values (ids, keys, names, metadata).
LINE_MARGIN = 64 * 1024
CO_COROUTINE = 0x80

BINARY_MIMES = ("image/png", "image/jpeg")
EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/svg+xml": "svg",
    "text/html": "html",
    "text/markdown": "md",
    "text/latex": "tex",
    "text/plain": "txt",
    "application/json": "json",
}
REPR_METHODS = (
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("image/svg+xml", "_repr_svg_"),
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("application/json", "_repr_json_"),
    ("text/latex", "_repr_latex_"),
)


class _State:
    """The driver's own state; deliberately not in the user's namespace."""

    def __init__(self):
        self.pid = os.getpid()
        self.run = None  # the Run in progress, or None while idle
        self.active = False  # user code may be on the stack: SIGINT raises KeyboardInterrupt
        self.pending = False  # SIGINT arrived while the driver's own frame ran: raise at the next safe point
        self.count = 0
        self.future_flags = 0
        self.loop = None
        self.cells = []  # (filename, size) of cell sources in linecache, oldest first
        self.cell_chars = 0
        self.write_lock = _thread.allocate_lock()
        self.libc = None


STATE = _State()
NO_VALUE = object()


# ---- the channel -------------------------------------------------------------------------------


def _write_all(data):
    view = memoryview(data)
    while view:
        try:
            written = os.write(MESSAGE_FD, view)
        except BrokenPipeError:
            os._exit(0)  # the daemon is gone; nobody is left to report to
        view = view[written:]


def _encode(message):
    try:
        return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (from a repr, a file name): escaped JSON is still valid JSON.
        return (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")


def _send(message):
    data = _encode(message)
    with STATE.write_lock:
        _write_all(data)


def _requests():
    """Yields each request line's object; returns at EOF on fd 3."""
    buffered = bytearray()
    scanned = 0  # bytes of `buffered` known to hold no newline (a huge line is scanned once, not per chunk)
    while True:
        chunk = os.read(REQUEST_FD, 1 << 16)
        if not chunk:
            return
        buffered += chunk
        while True:
            newline = buffered.find(b"\n", scanned)
            if newline < 0:
                scanned = len(buffered)
                break
            line = bytes(buffered[:newline])
            del buffered[: newline + 1]
            scanned = 0
            if not line.strip():
                continue
            try:
                request = json.loads(line.decode("utf-8"))
            except ValueError as err:
                sys.stderr.write("python_driver: ignored a request that is not JSON: %s\n" % err)
                continue
            if isinstance(request, dict):
                yield request


# ---- interrupts --------------------------------------------------------------------------------


def _on_sigint(signum, frame):
    if not STATE.active:
        return  # idle, or the run is being reported: harmless
    if frame is not None and frame.f_code.co_filename == DRIVER_FILE:
        # The driver's own code is running (between two steps of the run, or inside display()):
        # raising here could tear a message in half; it raises at the next safe point instead (before
        # the code, before its last expression, as display() returns). One that lands in the driver's
        # import hook waits for the next of those, if the run has one: the daemon re-sends SIGINT.
        STATE.pending = True
        return
    raise KeyboardInterrupt


def _arm_sigint():
    """Our handler, SIGINT unblocked: a cell may have replaced the one or blocked the other for good."""
    if signal.getsignal(signal.SIGINT) is not _on_sigint:
        signal.signal(signal.SIGINT, _on_sigint)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])  # a pending one is taken while idle: ignored


def _raise_pending():
    if STATE.pending and STATE.active:
        STATE.pending = False
        raise KeyboardInterrupt


# ---- MIME bundles ------------------------------------------------------------------------------


def _png_size(data):
    if len(data) >= 24 and data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


_REPR = None


def _plain_text(obj):
    """repr(obj), bounded: builtin containers are cut while they are formatted, anything else after."""
    global _REPR
    try:
        if type(obj) in (list, tuple, dict, set, frozenset, str, bytes):
            if _REPR is None:
                import reprlib

                _REPR = reprlib.Repr()
                _REPR.maxlevel = 8
                for name in ("maxdict", "maxlist", "maxtuple", "maxset", "maxfrozenset", "maxdeque", "maxarray"):
                    setattr(_REPR, name, 1000)
                _REPR.maxlong = _REPR.maxstring = _REPR.maxother = PLAIN_TEXT_LIMIT
            text = _REPR.repr(obj)
        else:
            text = repr(obj)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned %s" % type(text).__name__)
    except KeyboardInterrupt:
        raise
    except Exception as err:  # noqa: BLE001 (a broken __repr__ is the user's; the run goes on)
        text = "<%s object: repr() failed: %s: %s>" % (type(obj).__name__, type(err).__name__, err)
    if len(text) > PLAIN_TEXT_LIMIT:
        text = "%s… [%d more characters]" % (text[:PLAIN_TEXT_LIMIT], len(text) - PLAIN_TEXT_LIMIT)
    return text


def _is_json(value):
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError, RecursionError):
        return False


def _valid(mime, value):
    if mime in BINARY_MIMES:
        return isinstance(value, (bytes, bytearray, memoryview, str))
    if mime == "application/json" or mime.endswith("+json"):
        return _is_json(value)
    return isinstance(value, str)


def _split_metadata(value):
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        return value
    return value, None


def _call_repr(obj, method_name):
    try:
        method = getattr(obj, method_name, None)
        if not callable(method):
            return None, None
        return _split_metadata(method())
    except KeyboardInterrupt:
        raise
    except Exception as err:  # noqa: BLE001
        sys.stderr.write("display: %s.%s() raised %s: %s\n" % (type(obj).__name__, method_name, type(err).__name__, err))
        return None, None


def _matplotlib_figure(obj):
    figure_module = sys.modules.get("matplotlib.figure")
    return figure_module is not None and isinstance(obj, figure_module.Figure)


def _bundle(obj):
    """The MIME bundle of a value, as IPython builds it: {mime: str | bytes | JSON value}, metadata."""
    data, metadata = {}, {}
    if _matplotlib_figure(obj):
        import importlib

        backend = importlib.import_module(BACKEND_MODULE)
        data, metadata = backend.figure_bundle(obj)
        if STATE.run is not None:
            STATE.run.shown_figures.add(id(obj))
    elif not isinstance(obj, type):  # on a class, _repr_html_ and friends are unbound functions
        bundle, bundle_metadata = _call_repr(obj, "_repr_mimebundle_")
        if isinstance(bundle, dict):
            data.update((k, v) for k, v in bundle.items() if isinstance(k, str) and v is not None and _valid(k, v))
            if isinstance(bundle_metadata, dict):
                metadata.update(bundle_metadata)
        for mime, method_name in REPR_METHODS:
            if mime in data:
                continue
            # One image is enough: an object offering PNG and JPEG (Pillow >= 10) is sent as PNG.
            if mime == "image/jpeg" and "image/png" in data:
                continue
            value, value_metadata = _call_repr(obj, method_name)
            if value is not None and _valid(mime, value):
                data[mime] = value
                if isinstance(value_metadata, dict):
                    metadata[mime] = value_metadata
    if "text/plain" not in data or not isinstance(data["text/plain"], str):
        data["text/plain"] = _plain_text(obj)
    return data, metadata


# ---- a run's outputs: inline, in files, or omitted, within the budget ---------------------------


class Run:
    def __init__(self, request):
        self.id = str(request.get("id", ""))
        self.files_dir = request.get("filesDir")
        self.max_inline = _positive(request.get("maxInlineBytes"), DEFAULT_MAX_INLINE)
        self.max_line = _positive(request.get("maxLineBytes"), DEFAULT_MAX_LINE)
        self.budget = _positive(request.get("maxRunBytes"), DEFAULT_RUN_BUDGET)
        self.used = 0
        self.files = 0
        self.omitted = []
        self.omitted_more = [0, 0]  # values and bytes beyond OMITTED_LIMIT entries
        self.shown_figures = set()

    def omit(self, mime, size, why):
        if len(self.omitted) < OMITTED_LIMIT:
            self.omitted.append({"mime": mime, "bytes": size, "why": why})
        else:
            self.omitted_more[0] += 1
            self.omitted_more[1] += size

    def omitted_list(self):
        count, size = self.omitted_more
        if not count:
            return self.omitted
        return self.omitted + [{"mime": "*", "bytes": size, "why": "%d more values omitted" % count}]

    def package(self, data, metadata):
        """{data, files?, metadata?} of a bundle: values encoded, large ones in files, none beyond the budget."""
        encoded = []  # (mime, wire value, encoded JSON size, file content or None)
        for mime, value in data.items():
            if mime in BINARY_MIMES:
                if isinstance(value, str):
                    content, value = None, value
                else:
                    content = bytes(value)
                    value = binascii.b2a_base64(content, newline=False).decode("ascii")
                    size = _png_size(content) if mime == "image/png" else None
                    if size and mime not in metadata:
                        metadata[mime] = {"width": size[0], "height": size[1]}
                encoded.append((mime, value, len(value) + 2, content))
                continue
            if mime == "text/plain" and len(value) > PLAIN_TEXT_LIMIT:
                value = value[:PLAIN_TEXT_LIMIT] + "… [truncated]"
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
            is_json = mime == "application/json" or mime.endswith("+json")
            encoded.append((mime, value, len(text.encode("utf-8", "surrogatepass")), text if is_json else None))
        inline, files = {}, {}
        line_room = self.max_line - LINE_MARGIN
        # text/plain first (always inline), then smallest first: one huge value cannot crowd out the small ones.
        encoded.sort(key=lambda item: (item[0] != "text/plain", item[2]))
        for mime, value, size, content in encoded:
            if self.used + size > self.budget:
                self.omit(mime, size, "over the run's budget")
                continue
            if mime == "text/plain" or (size <= self.max_inline and size <= line_room):
                inline[mime] = value
                line_room -= size
            else:
                path = self._write_file(mime, value, content)
                if path is None:
                    continue
                files[mime] = path
            self.used += size
        packaged = {"data": inline}
        if files:
            packaged["files"] = files
        metadata = {k: v for k, v in metadata.items() if k in inline or k in files}
        if metadata and _is_json(metadata):
            packaged["metadata"] = metadata
        return packaged

    def _write_file(self, mime, value, content):
        if not self.files_dir:
            self.omit(mime, 0, "too large to send inline and the run has no filesDir")
            return None
        self.files += 1
        safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.id) or "run"
        path = os.path.join(self.files_dir, "%s-%d.%s" % (safe_id, self.files, EXTENSIONS.get(mime, "bin")))
        if isinstance(content, str):
            content = content.encode("utf-8", "surrogatepass")
        elif content is None:
            content = binascii.a2b_base64(value) if mime in BINARY_MIMES else value.encode("utf-8", "surrogatepass")
        try:
            os.makedirs(self.files_dir, exist_ok=True)
            with open(path, "wb") as out:
                out.write(content)
        except OSError as err:
            self.omit(mime, len(content), "could not write its file: %s" % err)
            return None
        return path


def _positive(value, default):
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _display_bundle(data, metadata=None):
    """Sends one display message of the current run (dropped, with a note on stderr, between runs)."""
    if os.getpid() != STATE.pid:
        return  # a forked child of user code: the channel is the parent's
    with STATE.write_lock:
        run = STATE.run
        if run is None:
            sys.stderr.write("display() outside a run: dropped (%s)\n" % ", ".join(sorted(data)))
            return
        packaged = run.package(data, dict(metadata or {}))
        if not packaged["data"] and "files" not in packaged:
            return  # every value was omitted: the run's "done" lists them
        message = {"type": "display", "id": run.id}
        message.update(packaged)
        _write_all(_encode(message))


def display(*objs, raw=False, metadata=None, **_ignored):
    """Shows each object as a rich output of the current run (IPython's display()); raw=True takes MIME dicts."""
    for obj in objs:
        if raw and isinstance(obj, dict):
            data = {k: v for k, v in obj.items() if isinstance(k, str) and v is not None and _valid(k, v)}
            data_metadata = {}
        else:
            data, data_metadata = _bundle(obj)
        if isinstance(metadata, dict):
            data_metadata.update(metadata)
        _display_bundle(data, data_metadata)
    _raise_pending()


class _Exit:
    """exit()/quit() that raise SystemExit without closing stdin (site's Quitter closes it)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() to end the run with SystemExit; the context stays." % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


# ---- matplotlib: the driver's backend, chosen on matplotlib's first import -----------------------


class _DriverImports:
    """A meta-path finder for two names: the driver's matplotlib backend (by its file, so the driver's
    directory stays off sys.path), and matplotlib itself, to select that backend once it is loaded.

    The backend is set in matplotlib's rcParams, not in MPLBACKEND: an environment variable would be
    inherited by every child process, whose own matplotlib could not import a module:// backend that
    only this process can find. An explicit MPLBACKEND (the user's choice) is kept.
    """

    def __init__(self):
        self.matplotlib_seen = False

    def find_spec(self, name, path=None, target=None):
        if name == BACKEND_MODULE:
            import importlib.util

            spec = importlib.util.spec_from_file_location(name, BACKEND_FILE)
            _after_exec(spec, _connect_backend)
            return spec
        if name == "matplotlib" and not self.matplotlib_seen:
            self.matplotlib_seen = True
            if os.environ.get("MPLBACKEND"):
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    _after_exec(spec, _select_backend)
                    return spec
        return None


def _after_exec(spec, then):
    loader = spec.loader if spec is not None else None
    if loader is None or not hasattr(loader, "exec_module"):
        return
    exec_module = loader.exec_module

    def exec_then(module):
        exec_module(module)
        then(module)

    loader.exec_module = exec_then


def _select_backend(matplotlib):
    matplotlib.rcParams["backend"] = "module://" + BACKEND_MODULE


def _connect_backend(backend):
    backend.publish = _display_bundle


def _flush_figures():
    """Figures still open at the end of a run go out as displays (not the ones already shown), then close."""
    backend = sys.modules.get(BACKEND_MODULE)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if backend is None or pyplot is None:
        return
    matplotlib = sys.modules["matplotlib"]
    if matplotlib.rcParams.get("backend") != "module://" + BACKEND_MODULE:
        return
    backend.flush_figures(skip=STATE.run.shown_figures)


# ---- running code ------------------------------------------------------------------------------


def _future_mask():
    import __future__

    mask = 0
    for feature in __future__.all_feature_names:
        mask |= getattr(__future__, feature).compiler_flag
    return mask


FUTURE_MASK = _future_mask()


def _register_source(filename, source):
    # Tracebacks and inspect.getsource() read cells from linecache; mtime None keeps checkcache() off them.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    STATE.cells.append((filename, len(source)))
    STATE.cell_chars += len(source)
    while STATE.cell_chars > CELL_SOURCE_BUDGET and len(STATE.cells) > 1:
        old, size = STATE.cells.pop(0)
        linecache.cache.pop(old, None)
        STATE.cell_chars -= size


def _ends_with_semicolon(source, node):
    lines = source.encode("utf-8").splitlines()
    rest = lines[node.end_lineno - 1][node.end_col_offset :] + b"\n" + b"\n".join(lines[node.end_lineno :])
    return rest.lstrip().startswith(b";")


def _compile(source, filename):
    """(body, last expression or None): the last expression statement is evaluated for the run's result."""
    flags = STATE.future_flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(source, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not _ends_with_semicolon(source, tree.body[-1]):
        last = ast.Expression(tree.body.pop().value)
    body = compile(tree, filename, "exec", flags, dont_inherit=True)
    STATE.future_flags |= body.co_flags & FUTURE_MASK
    expr = compile(last, filename, "eval", flags, dont_inherit=True) if last is not None else None
    return body, expr


def _await(coroutine):
    import asyncio

    if STATE.loop is None or STATE.loop.is_closed():
        STATE.loop = asyncio.new_event_loop()
    task = STATE.loop.create_task(coroutine)
    try:
        return STATE.loop.run_until_complete(task)
    except BaseException:
        task.cancel()
        raise


def _execute(body, expr, namespace):
    _raise_pending()
    if body.co_flags & CO_COROUTINE:
        _await(eval(body, namespace))
    else:
        exec(body, namespace)
    if expr is None:
        return NO_VALUE
    _raise_pending()
    if expr.co_flags & CO_COROUTINE:
        return _await(eval(expr, namespace))
    return eval(expr, namespace)


def _describe(exc):
    """{name, value, traceback} as the user would see it, without the driver's own frames."""
    import traceback

    summary = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    seen = set()
    pending = [summary]
    while pending:  # the exception, its __cause__/__context__ chain and any group members
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.stack[:] = [frame for frame in current.stack if frame.filename != DRIVER_FILE]
        pending.extend([current.__cause__, current.__context__] + list(getattr(current, "exceptions", None) or ()))
    try:
        value = str(exc)
    except Exception:  # noqa: BLE001
        value = "<unprintable %s object>" % type(exc).__name__
    lines = "".join(summary.format()).splitlines()
    return {"name": type(exc).__name__, "value": _bounded(value, ERROR_VALUE_LIMIT), "traceback": _bounded_lines(lines)}


def _bounded(text, limit):
    return text if len(text) <= limit else "%s… [%d more characters]" % (text[:limit], len(text) - limit)


def _bounded_lines(lines):
    """Each line and the whole bounded: the first lines and the last ones (where the error is) are kept."""
    lines = [_bounded(line, TRACEBACK_LINE_LIMIT) for line in lines]
    if sum(len(line) for line in lines) <= TRACEBACK_LIMIT:
        return lines
    head, tail, room = [], [], TRACEBACK_LIMIT // 4
    while lines and len(lines[0]) <= room:
        room -= len(lines[0])
        head.append(lines.pop(0))
    room += TRACEBACK_LIMIT // 2
    while lines and len(lines[-1]) <= room:
        room -= len(lines[-1])
        tail.insert(0, lines.pop())
    return head + ["… [%d lines omitted]" % len(lines)] + tail


def _flush_stdio():
    for stream in {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__) if s is not None}.values():
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 (a user's replacement stream may be closed or broken)
            pass
    if STATE.libc is None:
        try:
            import ctypes

            STATE.libc = ctypes.CDLL(None)
        except Exception:  # noqa: BLE001 (no ctypes in this Python: C stdio cannot be flushed)
            STATE.libc = False
    if STATE.libc:
        STATE.libc.fflush(None)


def _user_names(namespace):
    """The user's global names (not dunders, not `_`): the first NAMES_LIMIT sorted, and how many there are."""
    names = [k for k in namespace if isinstance(k, str) and k != "_" and not (k.startswith("__") and k.endswith("__"))]
    return heapq.nsmallest(NAMES_LIMIT, (k for k in names if len(k) <= NAME_CHARS)), len(names)


def _run(request, namespace):
    run = Run(request)
    STATE.count += 1
    STATE.pending = False
    STATE.run = run
    filename = "<cell %d>" % STATE.count
    source = request.get("code")
    status, error, result = "ok", None, None
    _arm_sigint()
    # From here a SIGINT interrupts the run: at once in the user's frames, at the next safe point in the driver's.
    STATE.active = True
    try:
        if not isinstance(source, str):
            raise TypeError("the run request has no code string")
        _register_source(filename, source)
        body, expr = _compile(source, filename)
        value = _execute(body, expr, namespace)
        if value is not NO_VALUE and value is not None:
            namespace["_"] = value
            data, metadata = _bundle(value)
            result = run.package(data, metadata)
    except KeyboardInterrupt as exc:
        STATE.active = False
        status, error = "interrupted", _describe(exc)
    except BaseException as exc:  # noqa: BLE001 (SystemExit too: the context stays, as in Jupyter)
        STATE.active = False
        status, error = "error", _describe(exc)
    # Figures drawn before an error or an interrupt still come back (Jupyter's post-execute flush).
    STATE.active = True
    try:
        _flush_figures()
    except KeyboardInterrupt as exc:
        STATE.active = False
        status = "interrupted"
        error = error or _describe(exc)
    except Exception as exc:  # noqa: BLE001
        STATE.active = False
        sys.stderr.write("python_driver: figures could not be sent: %s: %s\n" % (type(exc).__name__, exc))
    STATE.active = False
    STATE.pending = False
    _arm_sigint()
    if os.getpid() != STATE.pid:
        _flush_stdio()
        os._exit(0)  # a forked child of user code came back here: it must not answer for the parent
    _flush_stdio()
    names, total = _user_names(namespace)
    done = {"type": "done", "id": run.id, "status": status, "executionCount": STATE.count, "names": names}
    if total > len(names):
        done["namesTotal"] = total
    if result is not None:
        done["result"] = result
    if error is not None:
        done["error"] = error
    with STATE.write_lock:
        STATE.run = None  # from here a display() of a user thread is dropped, not sent after "done"
        if run.omitted:
            done["omitted"] = run.omitted_list()
        _write_all(_encode(done))


def _user_namespace():
    """A fresh __main__ for the user: pickling and `if __name__ == "__main__"` work, the driver stays out of it."""
    main = types.ModuleType("__main__")
    main.__dict__.update({"__builtins__": builtins, "__doc__": None, "__spec__": None, "__loader__": None})
    sys.modules["__main__"] = main
    return main.__dict__


def main():
    _arm_sigint()
    namespace = _user_namespace()
    builtins.display = display
    builtins.exit = _Exit("exit")
    builtins.quit = _Exit("quit")
    sys.argv = [""]
    sys.meta_path.insert(0, _DriverImports())
    _send(
        {
            "type": "ready",
            "protocol": 1,
            "language": "python",
            "version": "%d.%d.%d" % sys.version_info[:3],
            "executable": sys.executable,
            "pid": STATE.pid,
        }
    )
    for request in _requests():
        if request.get("type") == "run":
            _run(request, namespace)
        else:
            sys.stderr.write("python_driver: ignored a request of type %r\n" % request.get("type"))
    _flush_stdio()
    sys.exit(0)
