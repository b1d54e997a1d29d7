"""
moto's S3 server (moto 5, from the machine's Python) for the tests that run Quiver and the engine on an s3:// root.

moto checks a conditional write (If-None-Match: *, If-Match) and then stores the object without a lock, so two
writers racing for one key could both be told they won, where S3 answers one of them 412. Here every request that
changes something is answered one at a time, its body read in full first: a conditional write's check and its write
are one step, as on S3, and reads go on beside them. Prints the port it listens on, then serves until stopped.
"""

import io
import logging
import sys
import threading

from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wsgi import get_input_stream

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

READS = {"GET", "HEAD", "OPTIONS"}
changes = threading.Lock()
moto = DomainDispatcherApplication(create_backend_app)


def one_change_at_a_time(environ, start_response):
    if environ["REQUEST_METHOD"] in READS:
        return moto(environ, start_response)
    body = get_input_stream(environ).read()
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    with changes:
        return list(moto(environ, start_response))


class Quiet(WSGIRequestHandler):
    def log_request(self, *args, **kwargs):
        pass


def main():
    host, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server(host, port, one_change_at_a_time, threaded=True, request_handler=Quiet)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
