#!/usr/bin/env python3
"""A host-side slowdown made on purpose (issue 41 item 4): a loopback TCP proxy in front of the
runtime that holds each new connection's first bytes for DELAY seconds before passing them on, then
relays both ways unchanged. The runtime's own prefill and decode are untouched (its timings do not
move); only what happens before the server sees the request gets slower, as a slower tokenizer,
HTTP layer or scheduler would make it.

usage: delay_proxy.py LISTEN_PORT TARGET_PORT DELAY_S
"""
import socket
import sys
import threading
import time

listen_port, target_port, delay = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client):
    try:
        first = client.recv(65536)
        if not first:
            client.close()
            return
        time.sleep(delay)
        upstream = socket.create_connection(("127.0.0.1", target_port))
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        upstream.sendall(first)
    except OSError:
        client.close()
        return
    threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
    pipe(client, upstream)


server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen(64)
while True:
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
