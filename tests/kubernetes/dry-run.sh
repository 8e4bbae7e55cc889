#!/usr/bin/env bash
# kubectl's own validation of Kubernetes manifests, offline:
#
#   tests/kubernetes/dry-run.sh FILE...
#
# runs `kubectl apply --dry-run=client --validate=strict -o json -f FILE...` against
# stub-apiserver.py (on a free port of 127.0.0.1, with a throw-away kubeconfig and cache in a
# temporary directory: ~/.kube is never read or written), prints kubectl's output (the objects as
# apply would send them, as JSON, on stdout; kubectl's errors on stderr) and exits with kubectl's
# status. kubectl validates each object against Kubernetes' OpenAPI definitions in
# openapi/swagger.json (see openapi/SOURCE.md): unknown fields, wrong types, missing required
# fields. Enum values, patterns, ranges and the API server's own validation are not checked.
#
# KUBECTL and PYTHON name the programs (default: kubectl, python3). STUB_LOG=FILE keeps the
# stub's log of what kubectl requested. Every step has a timeout; the stub is always stopped
# (and stops itself after 60 s in any case).
set -u

here=$(cd "$(dirname "$0")" && pwd)
kubectl=${KUBECTL:-kubectl}
python=${PYTHON:-python3}

if [ $# -eq 0 ]; then
  echo "usage: $0 FILE..." >&2
  exit 2
fi
for f in "$@"; do
  if [ ! -r "$f" ]; then
    echo "dry-run.sh: cannot read $f" >&2
    exit 2
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudoctor-dry-run.XXXXXX") || exit 2
stub_pid=
# shellcheck disable=SC2317 # (run by the EXIT trap)
cleanup() {
  if [ -n "$stub_pid" ]; then
    kill "$stub_pid" 2>/dev/null
    wait "$stub_pid" 2>/dev/null
  fi
  if [ -n "${STUB_LOG:-}" ] && [ -f "$tmp/stub.log" ]; then
    cp "$tmp/stub.log" "$STUB_LOG"
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

timeout 60 "$python" "$here/stub-apiserver.py" --port 0 --port-file "$tmp/port" --max-seconds 55 \
  >/dev/null 2>"$tmp/stub.log" &
stub_pid=$!
port=
for _ in $(seq 100); do
  if [ -s "$tmp/port" ]; then
    port=$(cat "$tmp/port")
    break
  fi
  if ! kill -0 "$stub_pid" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "dry-run.sh: the stub API server did not start:" >&2
  cat "$tmp/stub.log" >&2
  exit 2
fi

cat >"$tmp/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: stub
    cluster:
      server: http://127.0.0.1:$port
users:
  - name: stub
    user: {}
contexts:
  - name: stub
    context:
      cluster: stub
      user: stub
current-context: stub
EOF

# --validate=strict from kubectl 1.25 on; before it (Debian's kubernetes-client 1.20)
# --validate=true, which is the same client-side validation.
validate=strict
minor=$(HOME="$tmp" timeout 10 "$kubectl" version --client -o json 2>/dev/null |
  "$python" -c 'import json, sys; print(json.load(sys.stdin)["clientVersion"]["minor"].rstrip("+"))' 2>/dev/null)
if [ -n "$minor" ] && [ "$minor" -lt 25 ] 2>/dev/null; then
  validate=true
fi

args=()
for f in "$@"; do
  args+=(-f "$f")
done
env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u KUBERC \
  HOME="$tmp" KUBECONFIG="$tmp/kubeconfig" NO_PROXY=127.0.0.1 \
  timeout 30 "$kubectl" --cache-dir="$tmp/cache" --request-timeout=10s \
  apply --dry-run=client --validate="$validate" -o json "${args[@]}"
exit $?
