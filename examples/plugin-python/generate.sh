#!/bin/sh
# Regenerates the Python stubs in skillhost_pyecho/gen from the contract's
# proto and the two small service definitions in proto/. Needs Debian's
# protobuf-compiler and protobuf-compiler-grpc (for grpc_python_plugin):
#   apt-get install -y protobuf-compiler protobuf-compiler-grpc
# OUT=dir writes them elsewhere (the test compares such a copy).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-$here/skillhost_pyecho/gen}
protoc \
  -I "$root/shared/internal/proto/executor/v1" -I "$here/proto" \
  --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" \
  --python_out="$out" --grpc_python_out="$out" \
  executor.proto controller.proto health.proto
# The generated *_pb2_grpc modules import their *_pb2 siblings as top-level
# modules; make those imports relative so gen/ is an ordinary package.
for f in "$out"/*_pb2_grpc.py; do
  sed -i 's/^import \([a-z_]*_pb2\) as /from . import \1 as /' "$f"
done
