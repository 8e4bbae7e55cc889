#!/usr/bin/env python3
"""Re-makes tests/kubernetes/openapi/swagger.json from Kubernetes' own OpenAPI v2 document.

  tests/kubernetes/prune-openapi.py SWAGGER_JSON [--out FILE] [--root DEFINITION]...

SWAGGER_JSON is kubernetes/kubernetes's api/openapi-spec/swagger.json at the release named in
tests/kubernetes/openapi/SOURCE.md (or kubernetes-client/python's kubernetes/swagger.json.unprocessed
at the matching tag: the same JSON, re-indented). The pruning rule:

  - definitions: the root definitions (the kinds deploy/kubernetes uses: Namespace, DaemonSet,
    Job) and every definition they reach through "$ref", transitively; each kept definition is
    copied unchanged (descriptions and x-kubernetes-* extensions included);
  - "swagger" and "info" are kept as they are;
  - everything else is dropped: "paths", "parameters", "responses", "security",
    "securityDefinitions". kubectl's client-side validation reads only the definitions, and it
    runs only when the document's PATCH operations do not offer the fieldValidation query
    parameter (k8s.io/kubectl pkg/validation paramVerifyingSchema): with the paths kept, kubectl
    would leave validation to a server that --dry-run=client never asks.

The output is JSON with sorted keys, two-space indent, ASCII only, and a final newline, so the
same input always gives the same bytes. Standard library only."""
import argparse
import json
import os
import sys

ROOTS = [
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.batch.v1.Job",
]
REF_PREFIX = "#/definitions/"


def refs_in(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs_in(value)


def closure(definitions, roots):
    kept, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in kept:
            continue
        if name not in definitions:
            raise SystemExit(f"prune-openapi: no definition {name!r} in the input")
        kept.add(name)
        for ref in refs_in(definitions[name]):
            if not ref.startswith(REF_PREFIX):
                raise SystemExit(f"prune-openapi: {name}: reference {ref!r} is not to a definition")
            todo.append(ref[len(REF_PREFIX):])
    return kept


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("swagger", help="Kubernetes' api/openapi-spec/swagger.json")
    ap.add_argument("--out", default=os.path.join(here, "openapi", "swagger.json"))
    ap.add_argument("--root", action="append", help="a root definition (default: %s)" % ", ".join(ROOTS))
    args = ap.parse_args()

    with open(args.swagger, encoding="utf-8") as f:
        spec = json.load(f)
    if spec.get("swagger") != "2.0" or "definitions" not in spec:
        raise SystemExit(f"prune-openapi: {args.swagger} is not an OpenAPI v2 (swagger 2.0) document")
    kept = closure(spec["definitions"], args.root or ROOTS)
    out = {
        "swagger": spec["swagger"],
        "info": spec.get("info", {}),
        "definitions": {name: spec["definitions"][name] for name in sorted(kept)},
    }
    text = json.dumps(out, indent=2, sort_keys=True, ensure_ascii=True) + "\n"
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(text)
    os.replace(tmp, args.out)
    print(f"prune-openapi: {len(kept)} of {len(spec['definitions'])} definitions, {len(text)} bytes -> {args.out}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
