#!/usr/bin/env python3
"""A stand-in for CDash's submit.php on loopback: stores every submitted file (HTTP PUT or POST) in
OUT_DIR, answers as CDash does, and writes the port it listens on to OUT_DIR/port.
usage: cdash_receiver.py OUT_DIR"""
import hashlib, http.server, os, sys, urllib.parse

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

class Handler(http.server.BaseHTTPRequestHandler):
    def store(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n)
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        name = os.path.basename(q.get("FileName", ["submission-%d.xml" % len(os.listdir(out))])[0])
        with open(os.path.join(out, name), "wb") as f:
            f.write(body)
        with open(os.path.join(out, "requests.log"), "a") as f:
            f.write(f"{self.command} {self.path}\n")
        reply = ('<cdash version="3.0.0"><status>OK</status><message></message><md5>%s</md5></cdash>\n'
                 % hashlib.md5(body).hexdigest()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    do_PUT = store
    do_POST = store
    def log_message(self, *a):
        pass

srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
srv.serve_forever()
