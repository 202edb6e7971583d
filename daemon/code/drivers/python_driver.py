"""hotline's Python driver, as the daemon starts it: `python3 -u python_driver.py`, fds 3 and 4 open.

It seals the channel first, then loads the driver proper (hotline_python_driver.py) as a module, so
its bytecode is cached in __pycache__ beside it (a script run as __main__ is compiled at every
start), and leaves neither its directory on sys.path nor the module in sys.modules: the user's
namespace does not reach it by an import.
"""

import os
import sys

# Before anything can spawn: no child of user code may inherit the channel (os.system, posix_spawn,
# a C library's fork+exec); only subprocess closes stray fds on its own.
try:
    for fd in (3, 4):
        os.set_inheritable(fd, False)
        os.set_blocking(fd, True)
except OSError as err:
    sys.stderr.write("python_driver: fds 3 (requests) and 4 (messages) must be open: %s\n" % err)
    sys.exit(2)

directory = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == directory:
    sys.path[0] = ""  # the user's working directory is importable (as in IPython), the driver's is not
sys.path.insert(0, directory)
write_bytecode = sys.dont_write_bytecode
sys.dont_write_bytecode = False  # the driver's own cache (where the directory is writable), whatever the user's setting
try:
    import hotline_python_driver as driver
finally:
    sys.dont_write_bytecode = write_bytecode
    del sys.path[0]
    sys.modules.pop("hotline_python_driver", None)
driver.main()
