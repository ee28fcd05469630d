# Shared by the CLI contract scripts (sourced): a scratch folder $T, the
# pass/fail counters, and the check that a command fails as the CLI promises.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# expect_fail OUTFILE PATTERN -- command...: exit code 2, one line on stderr
# matching PATTERN, no OUTFILE ("" for none) and no temporary file left in $T.
expect_fail() {
  local out=$1 pat=$2; shift 3
  "$@" >"$T/stdout" 2>"$T/stderr"
  local rc=$?
  local lines; lines=$(wc -l <"$T/stderr")
  if [ "$rc" -ne 2 ]; then bad "exit $rc (want 2): $*"; cat "$T/stderr"; return; fi
  if [ "$lines" -ne 1 ]; then bad "stderr has $lines lines (want 1): $*"; cat "$T/stderr"; return; fi
  if ! grep -q -- "$pat" "$T/stderr"; then bad "stderr lacks '$pat': $(cat "$T/stderr")"; return; fi
  if [ -n "$out" ] && [ -e "$out" ]; then bad "output $out exists after failure"; return; fi
  if ls "$T" | grep -q '\.tmp'; then bad "temporary file left behind"; return; fi
  ok
}
