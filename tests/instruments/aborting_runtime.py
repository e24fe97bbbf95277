#!/usr/bin/env python3
"""aborting_runtime.py: a TEST DOUBLE around the real llama-server that aborts only under a given
instrument, the way the real one aborted on the H200 and on lavapipe (issue 25): the runtime's own
assertion text on stderr, then SIGABRT (exit 134 in a shell), on its first completion request. It
never replaces the real runtime: without the trigger variable it execs the real one unchanged, and
with it everything the harness reads before the abort (readiness, the tokenizer, the log) is the real
llama-server's (Debian sid's, through its own loader).

To abort on the first request without a race (a tiny model answers in milliseconds), the double
stands between the harness and the runtime: it starts the real server on another loopback port, takes
the port the harness gave, forwards each request, and aborts when the first POST to a completion
endpoint arrives, before the runtime sees it.

Environment:
  FP_ABORT_UNDER   the variable whose presence makes it abort (an instrument's: GGML_VK_PERF_LOGGER,
                   GGML_SCHED_DEBUG, FLASHPROOF_KERNEL_TALLY...); "always": in every launch (a runtime
                   that crashes on its own); unset or empty: never
  FP_ABORT_UNLESS  a variable whose presence keeps it from aborting (GGML_SCHED_DEBUG: abort in the
                   timed configuration with the probe, the probed check, not in the evidence pass)
  FP_ABORT_AT      request (default): on the first completion request; start: before it is ready (a
                   process that dies at injection, where the CUDA driver loads the probe)
  FP_ABORT_TEXT    the line written to stderr before SIGABRT (default: the H200's words,
                   "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed")
  FP_REAL_ENV      the file that says where the real llama-server is (default: ci/setup.sh's
                   ${FLASHPROOF_CACHE:-/var/cache/flashproof}/env.sh)
  FP_REAL_RUNTIME  an executable to wrap instead (the replay double, for the probed check's probe)
"""
import os
import resource
import shlex
import signal
import socket
import subprocess
import sys
import threading

DEFAULT_TEXT = "./src/ggml-vulkan/ggml-vulkan.cpp:14327: GGML_ASSERT(ctx->compute_ctx.expired()) failed"
COMPLETION_PATHS = (b"/v1/chat/completions", b"/v1/completions", b"/completion")


def real_command():
    if os.environ.get("FP_REAL_RUNTIME"):
        return [os.environ["FP_REAL_RUNTIME"]]
    env_file = os.environ.get("FP_REAL_ENV") or os.path.join(os.environ.get("FLASHPROOF_CACHE") or "/var/cache/flashproof", "env.sh")
    values = {}
    try:
        with open(env_file) as f:
            for line in f:
                line = line.strip()
                if "=" in line and not line.startswith("#"):
                    k, v = line.split("=", 1)
                    values[k] = shlex.split(v)[0] if v else ""
    except OSError as e:
        sys.exit(f"aborting_runtime (test double): cannot read {env_file}: {e}")
    return [values["FLASHPROOF_LOADER"], "--library-path", values["FLASHPROOF_LIBRARY_PATH"], values["FLASHPROOF_LLAMA_SERVER"]]


def triggered(argv):
    under, unless = os.environ.get("FP_ABORT_UNDER", ""), os.environ.get("FP_ABORT_UNLESS", "")
    if "--version" in argv or "--list-devices" in argv:
        return False
    if unless and unless in os.environ:
        return False
    return under == "always" or (bool(under) and under in os.environ)


def die_like_ggml(server=None):
    sys.stderr.write(os.environ.get("FP_ABORT_TEXT", DEFAULT_TEXT) + "\n")
    sys.stderr.flush()
    if server is not None:
        server.kill()
        server.wait()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file for the double's own abort
    signal.signal(signal.SIGABRT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGABRT)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    return data


def forward(client, head, backend_port):
    """One request to the real server, its whole answer back, then both connections closed."""
    try:
        up = socket.create_connection(("127.0.0.1", backend_port))
    except OSError:
        client.close()
        return
    header_end = head.index(b"\r\n\r\n")
    lines = [l for l in head[:header_end].split(b"\r\n") if not l.lower().startswith(b"connection:")]
    up.sendall(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + head[header_end + 4:])

    def pump(src, dst):
        try:
            while True:
                b = src.recv(65536)
                if not b:
                    break
                dst.sendall(b)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    t = threading.Thread(target=pump, args=(client, up), daemon=True)
    t.start()
    pump(up, client)
    client.close()
    up.close()


def main():
    argv = sys.argv[1:]
    real = real_command()
    if not triggered(argv):
        os.execv(real[0], real + argv)
    if os.environ.get("FP_ABORT_AT", "request") == "start":
        sys.stderr.write("aborting_runtime (test double): aborting before the runtime is ready\n")
        die_like_ggml()
    if "--port" not in argv:
        sys.exit("aborting_runtime (test double): no --port in the command line")
    i = argv.index("--port")
    port = int(argv[i + 1])
    backend_port = free_port()
    inner = argv[:i + 1] + [str(backend_port)] + argv[i + 2:]
    server = subprocess.Popen(real + inner)  # its output is ours: the harness's log
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    signal.signal(signal.SIGTERM, lambda *_: (server.terminate(), server.wait(), os._exit(0)))

    def follow_server():  # the real server ended by itself (a model that fails to load): so do we
        code = server.wait()
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code)

    threading.Thread(target=follow_server, daemon=True).start()
    while True:
        client, _ = listener.accept()
        head = read_head(client)
        request_line = head.split(b"\r\n", 1)[0]
        parts = request_line.split(b" ")
        if len(parts) >= 2 and parts[0] == b"POST" and parts[1].split(b"?")[0] in COMPLETION_PATHS:
            die_like_ggml(server)
        if b"\r\n\r\n" not in head:
            client.close()
            continue
        threading.Thread(target=forward, args=(client, head, backend_port), daemon=True).start()


if __name__ == "__main__":
    main()
