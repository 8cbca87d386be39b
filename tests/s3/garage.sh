#!/usr/bin/env bash
# Runs a command beside a one-node Garage S3 server on loopback (`make test-s3`):
# a fresh metadata and data dir, a bucket `cruxe-test`, a key with its rights,
# and the AWS_* variables a client needs. Garage is stopped when the command ends.
#   tests/s3/garage.sh COMMAND [ARGS...]
set -euo pipefail
GARAGE=${GARAGE:-$(command -v garage || echo "$HOME/.cargo/bin/garage")}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rpc=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/garage.toml" <<TOML
metadata_dir = "$dir/meta"
data_dir = "$dir/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
[s3_api]
api_bind_addr = "127.0.0.1:$port"
s3_region = "garage"
root_domain = ".s3.garage.localhost"
TOML
export GARAGE_DEFAULT_ACCESS_KEY=GKcruxe0test0key0001
export GARAGE_DEFAULT_SECRET_KEY=cruxe-test-secret-key-0123456789abcdef
export GARAGE_DEFAULT_BUCKET=cruxe-test
"$GARAGE" -c "$dir/garage.toml" server --single-node --default-bucket > "$dir/garage.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done
export AWS_ENDPOINT="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true AWS_REGION=garage
export AWS_ACCESS_KEY_ID=$GARAGE_DEFAULT_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$GARAGE_DEFAULT_SECRET_KEY
# Garage ignores conditional writes; cruxe does not ask for them, and says so.
export AWS_CONDITIONAL_PUT=disabled
export CRUXE_TEST_S3=s3://cruxe-test
"$@"
