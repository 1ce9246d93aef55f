"""An OTLP/HTTP receiver for the tests: decodes each export with the official protobuf
definitions (PyPI opentelemetry-proto) and writes one JSON line a span, or a metric data
point, to the file given. Answers 200 to each export, as a collector does.

    receiver.py PORT_FILE OUT.jsonl

It binds port 0 and writes the port it got into PORT_FILE once it listens.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


def value(v):
    which = v.WhichOneof("value")
    if which == "array_value":
        return [value(x) for x in v.array_value.values]
    return getattr(v, which) if which else None


def attrs(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def spans(body):
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    for rs in req.resource_spans:
        resource = attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                yield {
                    "signal": "span",
                    "name": s.name,
                    "kind": KINDS.get(s.kind, str(s.kind)),
                    "trace_id": s.trace_id.hex(),
                    "span_id": s.span_id.hex(),
                    "parent_span_id": s.parent_span_id.hex(),
                    "start": s.start_time_unix_nano,
                    "end": s.end_time_unix_nano,
                    "attributes": attrs(s.attributes),
                    "status": STATUS.get(s.status.code, str(s.status.code)),
                    "events": [{"name": e.name, "attributes": attrs(e.attributes)} for e in s.events],
                    "links": [
                        {"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex(),
                         "attributes": attrs(l.attributes)}
                        for l in s.links
                    ],
                    "resource": resource,
                }


def points(body):
    req = ExportMetricsServiceRequest()
    req.ParseFromString(body)
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for p in data.data_points:
                    line = {"signal": "metric", "name": m.name, "unit": m.unit, "type": kind,
                            "attributes": attrs(p.attributes)}
                    if kind == "histogram":
                        line["count"] = p.count
                        line["sum"] = p.sum
                        line["bounds"] = list(p.explicit_bounds)
                    else:
                        line["value"] = p.as_double if p.HasField("as_double") else p.as_int
                    yield line


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/v1/traces":
            lines = list(spans(body))
        elif self.path == "/v1/metrics":
            lines = list(points(body))
        else:
            self.send_response(404)
            self.end_headers()
            return
        with open(sys.argv[2], "a", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line) + "\n")
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
