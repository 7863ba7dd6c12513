#!/usr/bin/env bats
# The test suite checks itself: no assertion in it that cannot fail.

load helpers

@test "suite: every '! cmd' assertion can fail (bats' errexit ignores a negated command; '|| false' makes it count)" {
  # bash's set -e ignores a pipeline negated with '!', so under bats a line '! grep ...' in a
  # test's middle passes whatever grep finds. Each such line must end in '|| false' (or
  # be written with run and a status check).
  run bash -c "grep -nE '^[[:space:]]*! ' '$BATS_TEST_DIRNAME'/*.bats | grep -vE '\\|\\| false([[:space:]]*(#.*|;;))?[[:space:]]*\$'"
  echo "$output"
  [ "$status" -eq 1 ] # grep found none
  [ -z "$output" ]
  # the check sees such a line: a negation without '|| false' in a scratch copy is reported
  printf '@test "x" {\n  ! grep -q a /dev/null\n  true\n}\n' > "$BATS_TEST_TMPDIR/x.bats"
  run bash -c "grep -nE '^[[:space:]]*! ' '$BATS_TEST_TMPDIR'/x.bats | grep -vE '\\|\\| false([[:space:]]*(#.*|;;))?[[:space:]]*\$'"
  [ "$status" -eq 0 ]
  [[ "$output" == *"grep -q a /dev/null"* ]]
}

@test "suite: every 'A && B' assertion line can fail (set -e ignores a failing A; '|| false' makes it count)" {
  # '[ "$status" -eq 2 ] && [[ $stderr == *x* ]]' passes under bats whatever the status
  # was: set -e ignores a failure anywhere in an && list but its last command.
  run bash -c "grep -nE '^[[:space:]]*(\\[|\\[\\[) .* && (\\[|\\[\\[|grep|test) ' '$BATS_TEST_DIRNAME'/*.bats | grep -vE '\\|\\| false'"
  echo "$output"
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  printf '@test "x" {\n  [ 1 -eq 2 ] && [ -z "" ]\n  true\n}\n' > "$BATS_TEST_TMPDIR/x.bats"
  run bash -c "grep -nE '^[[:space:]]*(\\[|\\[\\[) .* && (\\[|\\[\\[|grep|test) ' '$BATS_TEST_TMPDIR'/x.bats | grep -vE '\\|\\| false'"
  [ "$status" -eq 0 ]
  [[ "$output" == *"[ 1 -eq 2 ]"* ]]
  # and bats really does pass that scratch test: the reason for the rule
  run bats "$BATS_TEST_TMPDIR/x.bats"
  [ "$status" -eq 0 ]
}
