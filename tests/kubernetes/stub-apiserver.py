#!/usr/bin/env python3
"""Just enough of a Kubernetes API server for `kubectl apply --dry-run=client --validate=strict`,
offline: discovery, the OpenAPI v2 document kubectl validates against, and "not found" for
every object, so that apply treats each object as new and prints it. Standard library only.

  tests/kubernetes/stub-apiserver.py [--port N] [--port-file FILE] [--openapi FILE] [--max-seconds S]

Listens on 127.0.0.1 (port 0, the default: one the kernel chooses), prints the port on stdout
and writes it to --port-file (whole, by rename); logs every request to stderr ("stub: GET
/path accept=..."); exits by itself after --max-seconds, so a caller that dies cannot leave it
running.

What kubectl 1.32 asks, and what it gets (k8s.io/kubectl v0.32, k8s.io/cli-runtime v0.32):
  /version                     the server's version (kubectl's version-skew check)
  /api, /apis                  legacy discovery: kubectl asks for aggregated discovery
                               (apidiscovery.k8s.io/v2) first and takes plain APIVersions /
                               APIGroupList, then asks each group version
  /api/v1, /apis/G/V           the resources of each kind the OpenAPI document has
  /openapi/v3                  404: kubectl's fieldValidation check (QueryParamVerifierV3) then
                               falls back to the v2 document
  /openapi/v2                  the OpenAPI v2 document, as protobuf (gnostic openapi_v2.Document,
                               the only encoding client-go asks for) or JSON. It has no paths, so
                               no PATCH operation offers ?fieldValidation: kubectl decides that the
                               server cannot validate and validates each object itself, against
                               the definitions (kube-openapi pkg/util/proto/validation)
  GET of an object             404 NotFound Status: apply's dry run treats the object as new
Anything else is 404; a write (POST, PUT, PATCH, DELETE) is 405, so a kubectl that would change
something fails loudly instead."""
import argparse
import json
import os
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
# The type a real API server answers with (kube-openapi pkg/handler); kubectl asks for the older
# spelling with "@", which Go cannot parse as a Content-Type.
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-cudoctor-stub",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2024-12-11T00:00:00Z",
    "goVersion": "go1.23.3",
    "compiler": "gc",
    "platform": "linux/amd64",
}
# Kinds that are not namespaced (the rest of the document's kinds are), and plurals that are not
# the lower-case kind with "s" (or "ies", "es") added.
CLUSTER_SCOPED = {"Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding",
                  "CustomResourceDefinition", "StorageClass", "PriorityClass", "RuntimeClass"}
SHORT_NAMES = {"Namespace": ["ns"], "DaemonSet": ["ds"], "Job": []}


# --- protobuf: gnostic's openapi_v2 messages (github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto)

def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_string(number, text):
    return field_bytes(number, text.encode("utf-8"))


def field_varint(number, n):
    return varint(number << 3) + varint(n)


def field_double(number, x):
    return varint(number << 3 | 1) + struct.pack("<d", float(x))


def any_message(value):
    # openapi_v2.Any: the value as YAML text (field 2); JSON is YAML. kube-openapi and
    # cli-runtime read extensions and defaults back with yaml.Unmarshal.
    return field_string(2, json.dumps(value, sort_keys=True))


def named(number, name, payload):
    return field_bytes(number, field_string(1, name) + field_bytes(2, payload))


# Schema field numbers, by JSON key.
SCHEMA_STRINGS = {"$ref": 1, "format": 2, "title": 3, "description": 4, "pattern": 13, "discriminator": 26}
SCHEMA_DOUBLES = {"multipleOf": 6, "maximum": 7, "minimum": 9}
SCHEMA_BOOLS = {"exclusiveMaximum": 8, "exclusiveMinimum": 10, "uniqueItems": 16, "readOnly": 27}
SCHEMA_INTS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15, "maxProperties": 17,
               "minProperties": 18}


def schema_message(s, where):
    out = bytearray()
    for key, value in s.items():
        if key in SCHEMA_STRINGS:
            out += field_string(SCHEMA_STRINGS[key], value)
        elif key in SCHEMA_DOUBLES:
            out += field_double(SCHEMA_DOUBLES[key], value)
        elif key in SCHEMA_BOOLS:
            out += field_varint(SCHEMA_BOOLS[key], 1 if value else 0)
        elif key in SCHEMA_INTS:
            out += field_varint(SCHEMA_INTS[key], int(value))
        elif key == "default":
            out += field_bytes(5, any_message(value))
        elif key == "required":
            for name in value:
                out += field_string(19, name)
        elif key == "enum":
            for item in value:
                out += field_bytes(20, any_message(item))
        elif key == "additionalProperties":
            if isinstance(value, bool):
                out += field_bytes(21, field_varint(2, 1 if value else 0))
            else:
                out += field_bytes(21, field_bytes(1, schema_message(value, where + ".additionalProperties")))
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            out += field_bytes(22, b"".join(field_string(1, t) for t in types))
        elif key == "items":
            items = value if isinstance(value, list) else [value]
            out += field_bytes(23, b"".join(field_bytes(1, schema_message(i, where + ".items")) for i in items))
        elif key == "allOf":
            for i, sub in enumerate(value):
                out += field_bytes(24, schema_message(sub, f"{where}.allOf[{i}]"))
        elif key == "properties":
            props = b"".join(named(1, name, schema_message(sub, f"{where}.{name}")) for name, sub in value.items())
            out += field_bytes(25, props)
        elif key == "example":
            out += field_bytes(30, any_message(value))
        elif key.startswith("x-"):
            out += named(31, key, any_message(value))
        else:
            raise ValueError(f"{where}: schema key {key!r} has no encoding here")
    return bytes(out)


def document_message(doc):
    out = bytearray(field_string(1, doc.get("swagger", "2.0")))
    info = doc.get("info", {})
    out += field_bytes(2, field_string(1, info.get("title", "")) + field_string(2, info.get("version", "")))
    unknown = set(doc) - {"swagger", "info", "definitions"}
    if unknown:
        raise ValueError(f"document keys {sorted(unknown)} have no encoding here (prune-openapi.py drops them)")
    defs = b"".join(named(1, name, schema_message(s, name)) for name, s in doc["definitions"].items())
    out += field_bytes(9, defs)
    return bytes(out)


# --- discovery, from the document's kinds

def plural(kind):
    k = kind.lower()
    if k.endswith("y") and k[-2:-1] not in "aeiou":
        return k[:-1] + "ies"
    if k.endswith(("s", "x", "ch", "sh")):
        return k + "es"
    return k + "s"


def discovery(doc):
    """{group_version: [APIResource]} for every kind with x-kubernetes-group-version-kind."""
    gvs = {}
    for name, s in doc["definitions"].items():
        for gvk in s.get("x-kubernetes-group-version-kind", []):
            kind = gvk["kind"]
            if kind.endswith("List") or "metadata" not in s.get("properties", {}):
                continue
            gv = gvk["version"] if not gvk["group"] else gvk["group"] + "/" + gvk["version"]
            res = {
                "name": plural(kind),
                "singularName": kind.lower(),
                "namespaced": kind not in CLUSTER_SCOPED,
                "kind": kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            }
            if SHORT_NAMES.get(kind):
                res["shortNames"] = SHORT_NAMES[kind]
            gvs.setdefault(gv, []).append(res)
    return gvs


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cudoctor-stub-apiserver"

    def log_message(self, fmt, *args):  # the request log below replaces http.server's
        pass

    def send(self, code, body, content_type="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def status(self, code, reason, message):
        self.send(code, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                         "message": message, "reason": reason, "code": code})

    def log_request_line(self):
        sys.stderr.write(f"stub: {self.command} {self.path} accept={self.headers.get('Accept', '')}\n")
        sys.stderr.flush()

    def do_GET(self):
        self.log_request_line()
        srv = self.server
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        if path == "/version":
            return self.send(200, SERVER_VERSION)
        if path == "/api":
            return self.send(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % srv.server_port}]})
        if path == "/apis":
            groups = {}
            for gv in srv.gvs:
                if "/" in gv:
                    g, v = gv.split("/")
                    groups.setdefault(g, []).append({"groupVersion": gv, "version": v})
            return self.send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": vs, "preferredVersion": vs[0]} for g, vs in sorted(groups.items())]})
        if path == "/openapi/v2":
            if "protobuf" in self.headers.get("Accept", ""):
                return self.send(200, srv.openapi_pb, PROTOBUF)
            return self.send(200, srv.openapi_json)
        gv = path[len("/api/"):] if path.startswith("/api/") else path[len("/apis/"):] if path.startswith("/apis/") else None
        if gv in srv.gvs:
            return self.send(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                                   "resources": srv.gvs[gv]})
        # An object (or a list, or /openapi/v3, or anything else): not found.
        parts = path.strip("/").split("/")
        name = parts[-1] if len(parts) > 2 else ""
        kind = parts[-2] if len(parts) > 3 else ""
        self.status(404, "NotFound", f'{kind} "{name}" not found' if name else "the server could not find the requested resource")

    do_HEAD = do_GET

    def refuse(self):
        self.log_request_line()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.status(405, "MethodNotAllowed", "the cudoctor stub API server changes nothing: use --dry-run=client")

    do_POST = do_PUT = do_PATCH = do_DELETE = refuse


def main():
    ap = argparse.ArgumentParser(description="Kubernetes API server stub for kubectl --dry-run=client")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: the kernel chooses)")
    ap.add_argument("--port-file", help="write the port here (by rename: the file is whole or absent)")
    ap.add_argument("--openapi", default=os.path.join(HERE, "openapi", "swagger.json"),
                    help="the OpenAPI v2 document (prune-openapi.py's output)")
    ap.add_argument("--max-seconds", type=float, default=120, help="exit after this long, whatever happens")
    args = ap.parse_args()

    with open(args.openapi, encoding="utf-8") as f:
        doc = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Stub)
    server.daemon_threads = True
    server.openapi_json = json.dumps(doc).encode()
    server.openapi_pb = document_message(doc)
    server.gvs = discovery(doc)

    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    sys.stderr.write(f"stub: listening on 127.0.0.1:{port}; kinds: "
                     + ", ".join(f"{gv} {r['kind']}" for gv, rs in sorted(server.gvs.items()) for r in rs) + "\n")
    sys.stderr.flush()

    def deadline():
        time.sleep(args.max_seconds)
        sys.stderr.write(f"stub: --max-seconds {args.max_seconds:g} reached, exiting\n")
        os._exit(3)

    threading.Thread(target=deadline, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
