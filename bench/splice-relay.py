"""A byte relay from a loopback port to another that moves bytes with splice(2) through a pipe:
the kernel's zero-copy path, which Node does not offer. It prints its port, then relays each
connection on two threads until the process ends. The preview bench measures it as the ceiling
of any relay on this machine."""

import fcntl
import os
import socket
import sys
import threading

F_SETPIPE_SZ = 1031
CHUNK = 1 << 20


def pump(src: socket.socket, dst: socket.socket) -> None:
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, CHUNK)
    try:
        while True:
            n = os.splice(src.fileno(), w, CHUNK)
            if n == 0:
                break
            while n:
                n -= os.splice(r, dst.fileno(), n)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def main() -> None:
    upstream = int(sys.argv[1])
    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        app = socket.create_connection(("127.0.0.1", upstream))
        for s in (client, app):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(client, app), daemon=True).start()
        threading.Thread(target=pump, args=(app, client), daemon=True).start()


main()
