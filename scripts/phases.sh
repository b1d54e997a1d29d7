# Sourced by the test scripts: runs each phase of a test run, and prints how long each took when the run ends,
# also when one fails. Scripts run by another (CI's .ci/run) add to its list, which it prints at its end.
if [ -z "${QUIVER_PHASES_FILE:-}" ]; then
  QUIVER_PHASES_FILE=$(mktemp)
  export QUIVER_PHASES_FILE
  trap 'print_phases; rm -f "$QUIVER_PHASES_FILE"' EXIT
fi

# phase NAME COMMAND...: runs the command as one phase of the run, and notes its duration and outcome.
phase() {
  local name=$1 start=$SECONDS status=0
  shift
  echo "== $name"
  "$@" || status=$?
  printf '%s\t%d\t%s\n' "$name" $((SECONDS - start)) "$([ $status = 0 ] && echo ok || echo "failed ($status)")" >>"$QUIVER_PHASES_FILE"
  return $status
}

print_phases() {
  echo "== how long each phase took"
  awk -F'\t' '{ printf "  %-64s %3dm%02ds  %s\n", $1, $2 / 60, $2 % 60, $3; total += $2 }
    END { printf "  %-64s %3dm%02ds\n", "in all", total / 60, total % 60 }' "$QUIVER_PHASES_FILE"
}

# Makes sure moto's S3 server (Python) is there for the S3 runs, installing it with pip when it is missing.
need_moto() {
  python3 -c 'import moto.server' 2>/dev/null && return 0
  echo "Installing moto's S3 server for the S3 tests (pip install 'moto[server]')..."
  if ! python3 -m pip install --quiet 'moto[server]'; then
    echo "quiver: the S3 tests need moto's S3 server: 'python3 -m pip install \"moto[server]\"' failed; install it and run again" >&2
    return 1
  fi
}
