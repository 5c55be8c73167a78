#!/bin/sh
# run.sh runs one stdiff command for the stdiff GitHub action (action.yml beside it), and is what its
# tests run: `stdiff COMMAND --format markdown ARGS…`, its Markdown report appended to the file
# $GITHUB_STEP_SUMMARY names (the job summary), and printed to the log; stdiff's errors go to the log
# and, in a fenced block, to the summary. It exits with stdiff's status (0 same / valid, 1 different /
# invalid, 2 trouble) and writes it as the step output exit-code.
#
# Environment:
#   STDIFF_COMMAND  the command: diff (default), check, inspect, hash or dupes
#   STDIFF_ARGS     its arguments: one per line, or on one line separated by blanks (no quoting, no
#                   globbing, nothing evaluated)
#   STDIFF          the stdiff to run (default: stdiff on PATH)
#   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT  as GitHub Actions sets them (unset: not written)
set -u

command=${STDIFF_COMMAND:-diff}
stdiff=${STDIFF:-stdiff}
case $command in
diff | check | inspect | hash | dupes) ;;
*)
	echo "stdiff action: unknown command '$command' (diff, check, inspect, hash or dupes)" >&2
	exit 2
	;;
esac

# The arguments, taken apart without the shell evaluating them: one per line when there are several
# lines, else split at blanks.
set -f
nl='
'
case ${STDIFF_ARGS:-} in
*"$nl"*) IFS=$nl ;;
*) IFS=' 	' ;;
esac
# shellcheck disable=SC2086 # split on purpose, globbing is off
set -- ${STDIFF_ARGS:-}
unset IFS
set +f

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

"$stdiff" "$command" --format markdown "$@" >"$tmp/report.md" 2>"$tmp/errors.txt"
status=$?

cat "$tmp/report.md"
cat "$tmp/errors.txt" >&2
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
	{
		cat "$tmp/report.md"
		if [ -s "$tmp/errors.txt" ]; then
			printf '\n```text\n'
			sed 's/^```/ ```/' "$tmp/errors.txt"
			printf '```\n'
		fi
		printf '\n'
	} >>"$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
	echo "exit-code=$status" >>"$GITHUB_OUTPUT"
fi
exit "$status"
