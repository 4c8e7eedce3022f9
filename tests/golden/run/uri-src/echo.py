# A loopback HTTP server for this case: answers each request with what it received (method,
# path, body) as JSON, writes its port to ./port, and exits after three requests or 20 s.
import http.server
import json
import os
import sys
import threading


class Echo(http.server.BaseHTTPRequestHandler):
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        out = json.dumps({"method": self.command, "path": self.path, "body": body}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = answer

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
with open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "port"), "w") as f:
    f.write(str(server.server_port))
threading.Timer(20, lambda: os._exit(0)).start()
for _ in range(3):
    server.handle_request()
os._exit(0)
